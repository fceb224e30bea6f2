/**
 * The push message moves from the receipts' history into the queue (issue 31).
 * A receipt is written once and updated twice (claimed, answered); each
 * version carried the whole message (~0.8 kB of APNs and FCM payloads), so a
 * push wrote its message three times into the history and into the WAL, and
 * kept it there for good although nothing reads it once the provider has
 * answered. The queue row — deleted at that answer — now holds it: a history
 * row is ~150 bytes, and the database writes about half as much per
 * notification (docs/benchmarks.md, "Throughput as the tables grow").
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE push_queue ADD COLUMN message jsonb`
  yield* sql`UPDATE push_queue q SET message = r.message FROM push_receipts r WHERE r.id = q.receipt_id`
  // A queue row whose receipt is gone can never be sent; the outbox would only drop it later.
  yield* sql`DELETE FROM push_queue WHERE message IS NULL`
  yield* sql`ALTER TABLE push_queue ALTER COLUMN message SET NOT NULL`
  // Dropping a column only hides it: old rows keep their bytes until rewritten, new rows have none.
  yield* sql`ALTER TABLE push_receipts DROP COLUMN message`
})
