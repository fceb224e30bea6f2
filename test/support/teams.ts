/**
 * Set-up for team tests: a team or family with given members, written
 * straight to the database (as `makePerson` creates people through Identity),
 * so a test of one team route need not drive invites first; and an Agent API
 * client for a person who already exists.
 */
import type { Scope, TeamKind, TeamRole } from "@herald/api"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { makeId } from "../../packages/server/src/lib/Ids.ts"
import { agentClient, makePerson, personClient } from "./server.ts"

export type Someone = Effect.Success<ReturnType<typeof makePerson>>

/** An API token with `scopes` for an existing person (through the Person API, as the phone app does). */
export const agentOf = (someone: Someone, scopes: ReadonlyArray<Scope>) =>
  Effect.gen(function*() {
    const app = yield* personClient(someone.session)
    const created = yield* app.tokens.create({ payload: { name: "team test agent", scopes: [...scopes] } })
    return yield* agentClient(created.secret)
  }).pipe(Effect.orDie)

/** A team (`kind` family unless told) owned by `owner`, with `members` already joined in their roles. */
export const seedTeam = (options: {
  readonly owner: Someone
  readonly kind?: TeamKind
  readonly name?: string
  readonly members?: ReadonlyArray<{ readonly person: Someone; readonly role: Exclude<TeamRole, "owner"> }>
}) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const id = yield* makeId("team")
    const kind = options.kind ?? "family"
    yield* sql`INSERT INTO teams (id, kind, plan, name) VALUES (${id}, ${kind}, ${kind === "family" ? "free" : "team"}, ${options.name ?? "Test team"})`
    yield* sql`INSERT INTO team_members (team_id, user_id, role) VALUES (${id}, ${options.owner.person.id}, 'owner')`
    for (const member of options.members ?? []) {
      yield* sql`INSERT INTO team_members (team_id, user_id, role) VALUES (${id}, ${member.person.person.id}, ${member.role})`
    }
    return { teamId: id }
  }).pipe(Effect.orDie)

/** An owner, an admin, a member and an outsider around one seeded team: the four roles access tables walk. */
export const seedRoles = (kind: TeamKind = "family") =>
  Effect.gen(function*() {
    const owner = yield* makePerson("owner")
    const admin = yield* makePerson("admin")
    const member = yield* makePerson("member")
    const outsider = yield* makePerson("outsider")
    const { teamId } = yield* seedTeam({ owner, kind, members: [{ person: admin, role: "admin" }, { person: member, role: "member" }] })
    return { teamId, owner, admin, member, outsider }
  })
