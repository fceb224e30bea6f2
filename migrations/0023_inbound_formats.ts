/**
 * Real senders on webhook services (issue 34, docs/inbound-webhooks.md):
 *
 * - `services.format`: how the webhook URL reads deliveries (NULL: detected
 *   per delivery); `services.template`: the mapping of generic JSON (jsonb).
 * - `events`: what the delivery was read as (`format`), its push's
 *   `priority`, the sender's alert identity (`alert_key`) and `state`
 *   (firing/resolved), and the parsed `payload` (bounded, unknown fields
 *   kept). Rows from before have NULLs there.
 * - `events.alert_open`: a firing event whose pushes a `resolved` delivery of
 *   the same service and key has not withdrawn yet; the partial index finds
 *   exactly those, so withdrawing costs the open firings, not the history.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE services ADD COLUMN format text, ADD COLUMN template jsonb`
  yield* sql`
    ALTER TABLE events
      ADD COLUMN format text,
      ADD COLUMN priority text,
      ADD COLUMN alert_key text,
      ADD COLUMN state text,
      ADD COLUMN payload jsonb,
      ADD COLUMN alert_open boolean NOT NULL DEFAULT false`
  yield* sql`CREATE INDEX events_open_alert_idx ON events (service_id, alert_key) WHERE alert_open`
})
