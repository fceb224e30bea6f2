/**
 * Quiet hours (issue 34, docs/quiet-hours.md):
 *
 * - `quiet_hours`: one row per person who set them: the weekly schedule
 *   (`windows`, local wall-clock times in `time_zone`), whether it applies,
 *   the mode (`silent` | `hold`) and the end of a mute. Read whole into each
 *   process's cache at start (quiet/QuietGate.ts) and re-read per person on
 *   `NOTIFY herald_quiet`, so deciding a push costs no statement.
 * - `quiet_held`: the items whose pushes were held (mode `hold`), one row per
 *   person and item, due for the summary at `release_at` (the end of the quiet
 *   period they were held in). Claimed and deleted in the transaction that
 *   queues the summary push, so a restart neither loses nor repeats it.
 * - `notifications.priority` and `interactions.urgent`: what the caller asked
 *   for, stored with the item.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE quiet_hours (
      user_id text PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
      enabled boolean NOT NULL DEFAULT false,
      time_zone text NOT NULL DEFAULT 'UTC',
      windows jsonb NOT NULL DEFAULT '[]',
      mode text NOT NULL DEFAULT 'silent' CHECK (mode IN ('silent', 'hold')),
      muted_until timestamptz,
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`
    CREATE TABLE quiet_held (
      user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      origin text NOT NULL,
      item_id text NOT NULL,
      title text NOT NULL,
      held_at timestamptz NOT NULL DEFAULT now(),
      release_at timestamptz NOT NULL,
      PRIMARY KEY (user_id, origin, item_id)
    )`
  yield* sql`CREATE INDEX quiet_held_release_idx ON quiet_held (release_at)`
  yield* sql`ALTER TABLE notifications ADD COLUMN priority text CHECK (priority IN ('low', 'normal', 'high', 'critical'))`
  yield* sql`ALTER TABLE interactions ADD COLUMN urgent boolean NOT NULL DEFAULT false`
})
