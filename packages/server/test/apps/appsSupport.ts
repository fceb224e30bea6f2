/** Helpers of the web-app tests: a seeded team whose people each have an agent and a Person API client. */
import type { Scope } from "@herald/api"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { agentClient, personClient } from "../../../../test/support/server.ts"
import { seedRoles } from "../../../../test/support/teams.ts"
import type { Someone } from "../../../../test/support/teams.ts"

export const appScopes: ReadonlyArray<Scope> = [
  "apps:read",
  "apps:write",
  "teams:read",
  "notifications:send",
  "inbox:read",
  "interactions:create"
]

/**
 * A person with their agent (every scope the app tests use; as `agentOf`, keeping the secret for raw
 * calls) and their Person API client.
 */
export const withClients = (someone: Someone) =>
  Effect.gen(function*() {
    const app = yield* personClient(someone.session)
    const created = yield* app.tokens.create({ payload: { name: "apps test agent", scopes: [...appScopes] } })
    const agent = yield* agentClient(created.secret)
    return { ...someone, id: someone.person.id, agent, app, secret: created.secret }
  }).pipe(Effect.orDie)

/** A family's owner, admin and member, and an outsider, each with clients. */
export const seedAppRoles = Effect.gen(function*() {
  const roles = yield* seedRoles()
  return {
    teamId: roles.teamId,
    owner: yield* withClients(roles.owner),
    admin: yield* withClients(roles.admin),
    member: yield* withClients(roles.member),
    outsider: yield* withClients(roles.outsider)
  }
})

/** The HTTP status a typed-client call ended with (2xx as 200; failures by their error's status). */
export const statusOf = <A, E extends { readonly _tag: string }, R>(call: Effect.Effect<A, E, R>) =>
  Effect.match(call, {
    onSuccess: () => 200,
    onFailure: (e) => ({ NotFound: 404, Forbidden: 403, MissingScope: 403, Conflict: 409, LimitReached: 422 } as Record<string, number>)[e._tag] ?? -1
  })

/** The team's audit entries about one app, oldest first. */
export const appAudit = (appId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ teamId: string; action: string; actorUserId: string }>`
      SELECT team_id, action, actor_user_id FROM team_audit WHERE target_id = ${appId} ORDER BY created_at, id`)
