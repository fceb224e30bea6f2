/**
 * Upkeep of the tables updated in place (issue 31), where autovacuum runs:
 * queues are vacuumed and analyzed after a fixed number of changes rather
 * than a share of their size, so their claim statements never walk months of
 * dead index entries or plan from statistics taken when they were empty; and
 * rows updated after their insert (a feed entry's result, a live activity's
 * state) get room on their page, so those updates can be HOT. Where
 * autovacuum is off, or on PGlite (which has none), db/TableMaintenance.ts
 * does the vacuuming; these settings only tune autovacuum itself.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE push_receipts SET (autovacuum_vacuum_scale_factor = 0.02, autovacuum_vacuum_threshold = 1000,
    autovacuum_analyze_scale_factor = 0.02)`
  yield* sql`ALTER TABLE live_activity_operations SET (autovacuum_vacuum_scale_factor = 0.05, autovacuum_vacuum_threshold = 1000,
    autovacuum_analyze_scale_factor = 0.05)`
  yield* sql`ALTER TABLE reply_webhook_deliveries SET (autovacuum_vacuum_scale_factor = 0.05, autovacuum_vacuum_threshold = 1000,
    autovacuum_analyze_scale_factor = 0.05)`
  yield* sql`ALTER TABLE inbox_items SET (autovacuum_vacuum_scale_factor = 0.05)`
  yield* sql`ALTER TABLE activity_feed SET (fillfactor = 90, autovacuum_vacuum_scale_factor = 0.05)`
  yield* sql`ALTER TABLE live_activities SET (fillfactor = 80, autovacuum_vacuum_scale_factor = 0.05)`
})
