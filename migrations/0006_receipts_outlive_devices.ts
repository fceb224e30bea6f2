/**
 * A push receipt is history: an event's `deliveredCount` and an inbox item's
 * `pushReceipts` are read from it. Removing a device used to delete its
 * receipts with it (a cascade) and so rewrote that history. Receipts now keep
 * the removed device's id; the removal settles its still-pending pushes
 * (`error`, `DeviceRemoved`), and the outbox only claims pushes whose device
 * exists.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE push_receipts DROP CONSTRAINT IF EXISTS push_receipts_device_id_fkey`
  yield* sql`CREATE INDEX push_receipts_device_pending_idx ON push_receipts (device_id) WHERE status = 'pending'`
})
