/**
 * The update-token wait of a live activity (`readiness.warnings`) counts from
 * a device's first update that waited: its lowest update or end not yet sent,
 * queued or superseded. Read by this index, the answer no longer walks the
 * updates the activity was already sent, which grow with its age (two rows a
 * second for a card updated on two phones). Sent rows never enter it.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE INDEX live_activity_operations_unsent_idx ON live_activity_operations (activity_id, device_id, seq)
    WHERE op <> 'start' AND status IN ('queued', 'superseded')`
})
