/**
 * Test helpers for prompts: moving a prompt's deadline (what the passage of
 * time would do, without waiting an hour) and a local receiver for reply
 * webhooks that records what arrives and answers as told.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import * as http from "node:http"

/**
 * Moves a pending prompt's deadline to `atMillis`: its row and its durable
 * expiry timer (the cluster's stored `Expire` message), exactly as if the
 * prompt had been created with that deadline.
 */
export const moveDeadline = (id: string, atMillis: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    Effect.all([
      sql`UPDATE interactions SET expires_at = ${new Date(atMillis).toISOString()} WHERE id = ${id}`,
      sql`UPDATE cluster_messages SET deliver_at = ${atMillis} WHERE entity_type = 'Prompt' AND entity_id = ${id}`
    ])).pipe(Effect.orDie)

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
