/**
 * Rules that hold across nodes (issue 33): the per-token rate limits and a
 * device's live-activity start slot move from each node's memory into the
 * database every node shares.
 *
 * - `rate_limit_budgets`: one row per key (a token, or a webhook service for
 *   its inbound URL) with each budget's GCRA theoretical arrival time, in
 *   epoch milliseconds of the service clock (NULL: the budget is whole).
 *   Taken by one `INSERT … ON CONFLICT DO UPDATE … WHERE` per counted request
 *   (billing/RateLimitRepo.ts); rows whose budgets are whole are deleted every
 *   minute. `now_ms` is the latest time a take of the key was measured at:
 *   each node reads its clock before its statement runs, and statements run
 *   in no particular order, so a take is measured from the later of its own
 *   time and that one (as one clock would), or a budget's last unit was lost
 *   whenever a later request's statement ran first. Unlogged: a crash forgets who spent what in the last minute, which
 *   only gives every token its whole budget back, and no write-ahead log is
 *   written per request. Updates change no indexed column, and the free room
 *   on each page lets them stay HOT.
 * - `devices.last_activity_start_at`: when the device last got a live-activity
 *   start; the next goes one start interval later (activities/DevicePacing.ts).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE UNLOGGED TABLE rate_limit_budgets (
      key text PRIMARY KEY,
      requests_tat double precision,
      sends_tat double precision,
      now_ms double precision
    ) WITH (fillfactor = 50)`
  yield* sql`ALTER TABLE devices ADD COLUMN last_activity_start_at timestamptz`
})
