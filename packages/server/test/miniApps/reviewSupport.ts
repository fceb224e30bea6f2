/**
 * Set-up for review tests: a package published through the route (M1's
 * `archiveFor`), put in a given review state, and raw Agent API calls.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { rawFetch } from "../../../../test/support/server.ts"
import type { TestServer } from "../../../../test/support/server.ts"
import { archiveFor, publishRaw } from "./support.ts"

export type State = "personal-only" | "blocked" | "disabled" | "removed"
export type Action = "block" | "disable" | "remove"

/**
 * A package of the agent's person, published through POST /mini-apps/publish, then put in `state`
 * (default personal-only) in SQL; answers its id.
 */
export const seedPackage = (agent: { readonly secret: string; readonly person: { readonly id: string } }, state: State = "personal-only") =>
  Effect.gen(function*() {
    const published = yield* publishRaw(agent.secret, JSON.stringify(archiveFor(agent.person.id)))
    if (published.status !== 201) return yield* Effect.die(new Error(`publish: ${published.status} ${JSON.stringify(published.body)}`))
    const id = published.body.packageId as string
    if (state !== "personal-only") {
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE mini_app_packages SET review_state = ${state} WHERE id = ${id}`.pipe(Effect.orDie)
    }
    return id
  })

/** The stored review state of a package. */
export const stateOf = (packageId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ reviewState: State }>`SELECT review_state FROM mini_app_packages WHERE id = ${packageId}`
    return rows[0]!.reviewState
  }).pipe(Effect.orDie)

/** An Agent API call with a bearer token; the body (if any) as JSON. */
export const call = (secret: string, method: string, path: string, body?: unknown) =>
  rawFetch(`/api/agent${path}`, {
    method,
    headers: { authorization: `Bearer ${secret}`, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {})
  }) as Effect.Effect<{ status: number; headers: Headers; body: any }, never, TestServer>

/** A review transition. */
export const act = (secret: string, packageId: string, action: Action) =>
  action === "remove" ? call(secret, "DELETE", `/mini-apps/${packageId}`) : call(secret, "POST", `/mini-apps/${packageId}/${action}`)
