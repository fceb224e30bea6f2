/**
 * The dead-man's switch (issue 34, docs/dead-mans-switch.md): one row per
 * webhook service that expects deliveries (`service_watches`).
 *
 * - the settings: the period, the grace, and where a silence alert goes (the
 *   service's audience, or an on-call group as a page);
 * - `started_at`: when the settings were last saved (a new watch counts from
 *   then), `last_delivery_at`: written by each delivery in the statement the
 *   delivery already runs (no entity message per delivery);
 * - `silent_since` / `page_id`: set by the one conditional update that raises
 *   the alert and cleared by the one that says deliveries resumed, so a
 *   redelivered deadline changes nothing.
 *
 * `connector_watches`: a tunnel connector whose owner asked to be alerted
 * when it misses its heartbeats for `alert_after_seconds`; the last heartbeat
 * is the connector's own `last_seen_at` (a heartbeat writes nothing more).
 *
 * The timers themselves are the cluster's persisted `Check` deadlines of the
 * `DeliveryWatch` entity (watch/WatchProtocol.ts).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE service_watches (
      service_id text PRIMARY KEY REFERENCES services (id) ON DELETE CASCADE,
      expect_every_seconds integer NOT NULL,
      grace_seconds integer NOT NULL,
      alert_group_id text REFERENCES oncall_groups (id) ON DELETE SET NULL,
      started_at timestamptz NOT NULL,
      last_delivery_at timestamptz,
      silent_since timestamptz,
      page_id text
    )`
  yield* sql`
    CREATE TABLE connector_watches (
      connector_id text PRIMARY KEY REFERENCES connectors (id) ON DELETE CASCADE,
      alert_after_seconds integer NOT NULL,
      started_at timestamptz NOT NULL,
      silent_since timestamptz
    )`
})
