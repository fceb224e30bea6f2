/**
 * Liveness of the processes that send pushes: each node heartbeats here, and
 * a `sending` claim is given up as `unknown` only when its node has gone
 * quiet, never while the node that holds it still runs (however long it waits
 * for a slow provider).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE outbox_nodes (
      node text PRIMARY KEY,
      seen_at timestamptz NOT NULL DEFAULT now()
    )`
})
