/**
 * Test helpers for prompts: the service on a database the test holds (to
 * restart it, or to run its actor runtime at a limit), moving a prompt's
 * deadline (what the passage of time would do, without waiting an hour) and a
 * local receiver for reply webhooks that records what arrives and answers as
 * told.
 */
import { ConfigProvider, Effect, Layer } from "effect"
import type { ShardingConfig } from "effect/cluster"
import { HttpServer } from "effect/http"
import { SqlClient } from "effect/sql"
import * as http from "node:http"
import { ClusterTuning } from "../../packages/server/src/cluster/Cluster.ts"
import { CapabilitiesLayer, serviceLayer } from "../../packages/server/src/runtime/Server.ts"
import { TestServer } from "./server.ts"

/**
 * The service (routes and workers, as `herald serve` runs them) on the
 * database the caller provides: built again on the same database, it is a
 * restart. `tuning` overrides the actor runtime's sharding settings.
 */
export const serviceOnDatabase = (tuning: Partial<ShardingConfig.ShardingConfig["Service"]> = {}) =>
  Layer.effect(TestServer, Effect.map(HttpServer.HttpServer, (server) => {
    if (server.address._tag === "UnixPathAddress") throw new Error("expected a TCP address")
    return { baseUrl: `http://127.0.0.1:${server.address.port}` }
  })).pipe(
    Layer.provideMerge(serviceLayer({ port: 0, host: "127.0.0.1" })),
    Layer.provideMerge(CapabilitiesLayer.pipe(
      Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({}))),
      Layer.provide(Layer.succeed(ClusterTuning, tuning))
    ))
  )

/**
 * Moves a pending prompt's deadline to `atMillis`: its row and its durable
 * expiry timer (the cluster's stored `Expire` message), exactly as if the
 * prompt had been created with that deadline. Its other timers (reminders)
 * keep their times.
 */
export const moveDeadline = (id: string, atMillis: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.all([
      sql`UPDATE interactions SET expires_at = ${new Date(atMillis).toISOString()} WHERE id = ${id}`,
      sql`UPDATE cluster_messages SET deliver_at = ${atMillis} WHERE entity_type = 'Prompt' AND entity_id = ${id} AND tag = 'Expire'`
    ])).pipe(Effect.orDie)

/**
 * The withdrawal receipts of each prompt (purpose `withdraw`): one per device per expiry or answer
 * that ran, with how often each was claimed (a claim whose node died is claimed again: outbox/OutboxRepo.ts).
 */
export const withdrawReceipts = (ids: ReadonlyArray<string>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ itemId: string; attempts: number }>`
      SELECT item_id, attempts FROM push_receipts WHERE purpose = 'withdraw' AND item_id = ANY(${ids}::text[])`).pipe(Effect.orDie)

/**
 * Makes a prompt's waiting reminder timer (`Remind`, key `remind:<n>`; any waiting one when no key
 * is given) due now, as the passage of `everySeconds` would; answers how many timers it moved. One
 * is stored at a time, but one a killed process ran without recording its end waits too (for its
 * redelivery).
 */
export const reminderDueNow = (id: string, key?: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ id: string }>`
      UPDATE cluster_messages SET deliver_at = ${Date.now()}
      WHERE entity_type = 'Prompt' AND entity_id = ${id} AND tag = 'Remind' AND NOT processed
        ${key === undefined ? sql`` : sql`AND payload::jsonb ->> 'key' = ${key}`}
      RETURNING id::text`).pipe(Effect.map((rows) => rows.length), Effect.orDie)

/** The primary keys of a prompt's reminder timers still waiting (`remind:<n>`). */
export const waitingReminders = (id: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ payload: string }>`
      SELECT payload FROM cluster_messages
      WHERE entity_type = 'Prompt' AND entity_id = ${id} AND tag = 'Remind' AND NOT processed`).pipe(
    Effect.map((rows) => rows.map((r) => (JSON.parse(r.payload) as { key?: string }).key ?? "")),
    Effect.orDie
  )

/** The same for a live activity: its row and its stored `Expire` timer. */
export const moveActivityDeadline = (id: string, atMillis: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.all([
      sql`UPDATE live_activities SET expires_at = ${new Date(atMillis).toISOString()} WHERE id = ${id}`,
      sql`UPDATE cluster_messages SET deliver_at = ${atMillis} WHERE entity_type = 'LiveActivity' AND entity_id = ${id}`
    ])).pipe(Effect.orDie)

export interface Received {
  readonly path: string
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
  readonly at: number
}

/**
 * An HTTP receiver on 127.0.0.1 (reachable with HERALD_ALLOW_PRIVATE_NETWORK_TARGETS=1).
 * `answer` picks the status of the n-th request (0-based, with what arrived) and may redirect; a
 * negative status never answers.
 */
export const receiver = (
  answer: (n: number, request: Received) => { readonly status: number; readonly location?: string } = () => ({ status: 200 })
) =>
  Effect.acquireRelease(
    Effect.callback<{ readonly url: string; readonly received: Array<Received>; readonly server: http.Server }>((resume) => {
      const received: Array<Received> = []
      const server = http.createServer((req, res) => {
        const chunks: Array<Buffer> = []
        req.on("data", (c: Buffer) => chunks.push(c))
        req.on("end", () => {
          const n = received.length
          const request = { path: req.url ?? "/", headers: req.headers, body: Buffer.concat(chunks).toString("utf8"), at: Date.now() }
          received.push(request)
          const { location, status } = answer(n, request)
          if (status < 0) return // never answered: the request hangs until the client gives up
          res.writeHead(status, location !== undefined ? { location } : {})
          res.end()
        })
      })
      server.listen(0, "127.0.0.1", () => {
        const address = server.address() as { port: number }
        resume(Effect.succeed({ url: `http://127.0.0.1:${address.port}`, received, server }))
      })
    }),
    ({ server }) => Effect.callback<void>((resume) => {
      server.closeAllConnections()
      server.close(() => resume(Effect.void))
    })
  )
