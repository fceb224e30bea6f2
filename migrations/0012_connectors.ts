/**
 * Tunnel connectors: a person's gateways, their one-time passes and the
 * sessions those open, and the reply-webhook deliveries recorded for a
 * connector route (the gateway fetches each through `callback-access`).
 *
 * The callback secret is kept encrypted (AES-256-GCM under a server key), not
 * hashed: it is an HMAC key the service must use. Passes and session tokens
 * are stored as SHA-256 hashes only.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  yield* sql`
    CREATE TABLE connectors (
      id text PRIMARY KEY,
      user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      name text NOT NULL,
      routes jsonb NOT NULL,
      oncall_group_id text REFERENCES oncall_groups (id) ON DELETE SET NULL,
      secret_sealed text NOT NULL,
      last_seen_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX connectors_user_idx ON connectors (user_id, id DESC)`
  yield* sql`CREATE INDEX connectors_oncall_group_idx ON connectors (oncall_group_id) WHERE oncall_group_id IS NOT NULL`

  yield* sql`
    CREATE TABLE connector_passes (
      pass_hash text PRIMARY KEY,
      connector_id text NOT NULL REFERENCES connectors (id) ON DELETE CASCADE,
      user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      expires_at timestamptz NOT NULL,
      used_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX connector_passes_connector_idx ON connector_passes (connector_id)`

  yield* sql`
    CREATE TABLE connector_sessions (
      token_hash text PRIMARY KEY,
      connector_id text NOT NULL REFERENCES connectors (id) ON DELETE CASCADE,
      user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      expires_at timestamptz NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX connector_sessions_connector_idx ON connector_sessions (connector_id)`

  // One row per reply-webhook delivery to a connector route; `used_at` set by the one callback-access it allows.
  yield* sql`
    CREATE TABLE connector_deliveries (
      delivery_id text PRIMARY KEY REFERENCES reply_webhook_deliveries (id) ON DELETE CASCADE,
      connector_id text NOT NULL REFERENCES connectors (id) ON DELETE CASCADE,
      path text NOT NULL,
      body_sha256 text NOT NULL,
      recorded_at timestamptz NOT NULL DEFAULT now(),
      used_at timestamptz
    )`
  yield* sql`CREATE INDEX connector_deliveries_connector_idx ON connector_deliveries (connector_id)`
})
