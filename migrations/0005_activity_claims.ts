/**
 * Who claimed a live-activity operation, and when: an operation left
 * `sending` by a process that died is given up as `unknown` (the provider may
 * have it, so it is never sent again) and its device's queue moves on. The
 * process is a node of `outbox_nodes`, whose heartbeat tells it is alive.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE live_activity_operations ADD COLUMN claimed_by text, ADD COLUMN claimed_at timestamptz`
  yield* sql`CREATE INDEX live_activity_operations_sending_idx ON live_activity_operations (claimed_at) WHERE status = 'sending'`
})
