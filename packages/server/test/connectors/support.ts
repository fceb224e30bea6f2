/**
 * Set-up shared by the connector tests: Agent API clients with the connector
 * scopes (and reply-webhook scopes for callbacks), a connector body, an
 * on-call group written straight to the database, and the outcome of a call
 * as its error tag (or "ok") for access tables.
 */
import type { CreateConnectorRequest } from "@herald/api"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { makeId } from "../../src/lib/Ids.ts"
import { personClient, rawFetch } from "../../../../test/support/server.ts"
import { agentOf } from "../../../../test/support/teams.ts"
import type { Someone } from "../../../../test/support/teams.ts"

export const scopes = ["connectors:read", "connectors:write", "services:read", "services:write"] as const

export const clientOf = (someone: Someone) => agentOf(someone, [...scopes])

export const connectorBody = (over: Partial<CreateConnectorRequest> = {}): CreateConnectorRequest => ({
  name: "Home lab",
  routes: [{ pathPrefix: "/grafana", upstream: "http://127.0.0.1:3000" }, { pathPrefix: "/hooks", upstream: "http://10.0.0.5:8080/in" }],
  ...over
})

/** An on-call group of the team, as the on-call capability would store it. */
export const seedOncallGroup = (teamId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const id = yield* makeId("ocg")
    yield* sql`INSERT INTO oncall_groups (id, team_id, name, period, handoff_at, timezone, starts_at)
      VALUES (${id}, ${teamId}, 'Primary', 'daily', '09:00', 'UTC', now())`
    return id
  }).pipe(Effect.orDie)

/** "ok", or the tag of the error the call failed with. */
export const outcome = <A, E extends { readonly _tag: string }, R>(call: Effect.Effect<A, E, R>) =>
  call.pipe(Effect.as("ok"), Effect.catch((e: E) => Effect.succeed(e._tag)))

/** A token secret with the connector scopes, for raw calls (bodies the typed client would refuse to send). */
export const secretOf = (someone: Someone) =>
  Effect.flatMap(personClient(someone.session), (app) => app.tokens.create({ payload: { name: "raw", scopes: [...scopes] } })).pipe(
    Effect.map((created) => created.secret),
    Effect.orDie
  )

/** A raw Agent API call: the status, the error code (if any) and the body. */
export const raw = (secret: string, method: string, path: string, body?: unknown) =>
  Effect.map(
    rawFetch(`/api/agent${path}`, {
      method,
      headers: { authorization: `Bearer ${secret}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    }),
    (answer) => ({ status: answer.status, code: (answer.body as { code?: string }).code, body: answer.body })
  )
