/**
 * Prompts that never hang, and reminders (issue 34, docs/prompts-and-activities.md):
 *
 * - `interactions.default_on_timeout`: the answer a prompt resolves with at
 *   expiry (a status, or a reply's text); `timed_out` marks an outcome that
 *   came from it rather than from a person.
 * - `interactions.remind_every_seconds` / `remind_times`: the prompt's
 *   reminder schedule, resolved at creation (its own `remind`, else the
 *   person's default); `reminders_sent` counts the reminder pushes queued. A
 *   reminder moves it by exactly one, conditionally, in the transaction that
 *   queues its pushes: a timer delivered twice pushes once.
 * - `reminder_defaults`: a person's default schedule (`GET/PUT /me/reminders`).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE interactions ADD COLUMN default_on_timeout text`
  yield* sql`ALTER TABLE interactions ADD COLUMN timed_out boolean NOT NULL DEFAULT false`
  yield* sql`ALTER TABLE interactions ADD COLUMN remind_every_seconds int`
  yield* sql`ALTER TABLE interactions ADD COLUMN remind_times int`
  yield* sql`ALTER TABLE interactions ADD COLUMN reminders_sent int NOT NULL DEFAULT 0`
  yield* sql`
    CREATE TABLE reminder_defaults (
      user_id text PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
      every_seconds int NOT NULL,
      times int NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
})
