/**
 * The push outbox's queue apart from its history (issue 31). `push_receipts`
 * kept the queue's state in the history table: three partial indexes on
 * `status` (due, sending, a device's pending) made every status change a
 * non-HOT update writing all five indexes, and — where nothing vacuums
 * (autovacuum off, or PGlite, which has none) — left those indexes holding an
 * entry for every receipt ever queued. A claim whose cached plan chose the
 * pending index then read the whole history for each batch (4,858 buffers a
 * call at 200k receipts, against 107 by the primary key): the rate fell as
 * receipts piled up (docs/benchmarks.md, "Throughput as the tables grow").
 *
 * Now:
 * - `push_queue` holds one narrow row per receipt that is pending or being
 *   sent (no message): what to claim, when, and who holds it. It stays as
 *   small as the work in flight, and db/TableMaintenance.ts vacuums it.
 * - `push_receipts` is the history. No index reads its status or claim
 *   columns, so the two status changes of a push are HOT updates (no index
 *   writes, pruned in place without a vacuum); `fillfactor` leaves each page
 *   room for them.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  yield* sql`
    CREATE TABLE push_queue (
      receipt_id text PRIMARY KEY,
      device_id text NOT NULL,
      due_at timestamptz NOT NULL,
      claimed_by text,
      claimed_at timestamptz
    ) WITH (fillfactor = 80, autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000,
            autovacuum_analyze_scale_factor = 0, autovacuum_analyze_threshold = 1000)`
  // Claiming sets claimed_by/claimed_at, which no index reads: a HOT update.
  yield* sql`CREATE INDEX push_queue_due_idx ON push_queue (due_at)`
  yield* sql`CREATE INDEX push_queue_device_idx ON push_queue (device_id)`

  yield* sql`
    INSERT INTO push_queue (receipt_id, device_id, due_at, claimed_by, claimed_at)
    SELECT id, device_id, next_attempt_at, CASE WHEN status = 'sending' THEN claimed_by END,
           CASE WHEN status = 'sending' THEN claimed_at END
    FROM push_receipts WHERE status IN ('pending', 'sending')`

  yield* sql`DROP INDEX push_receipts_due_idx`
  yield* sql`DROP INDEX push_receipts_sending_idx`
  yield* sql`DROP INDEX push_receipts_device_pending_idx`
  // Room on each new page for a receipt's two later versions (claimed, answered).
  yield* sql`ALTER TABLE push_receipts SET (fillfactor = 70)`
})
