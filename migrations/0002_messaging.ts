/**
 * Messaging: webhook services and their inbound events, agent notifications,
 * the per-person inbox, the durable push outbox (one receipt row per device
 * push), idempotency keys, the activity feed, and server-held secrets (the
 * key that signs inbox cursors).
 *
 * Teams arrive later: `services.family_id` and the inbox's one-row-per-recipient
 * shape are what sharing with a family needs, without a foreign key yet.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  yield* sql`
    CREATE TABLE services (
      id text PRIMARY KEY,
      user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      title text NOT NULL,
      image_url text,
      url text,
      family_id text,
      default_reply_webhook_id text,
      token_hash text NOT NULL UNIQUE,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX services_user_idx ON services (user_id, id DESC)`
  yield* sql`CREATE INDEX services_family_idx ON services (family_id) WHERE family_id IS NOT NULL`

  // History outlives the service: no foreign key to services, the title is copied.
  yield* sql`
    CREATE TABLE events (
      id text PRIMARY KEY,
      user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      service_id text NOT NULL,
      service_title text NOT NULL,
      title text,
      body text NOT NULL,
      image_url text,
      url text,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX events_user_idx ON events (user_id, id DESC)`

  yield* sql`
    CREATE TABLE notifications (
      id text PRIMARY KEY,
      user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      token_id text,
      source_name text NOT NULL,
      title text NOT NULL,
      body text NOT NULL,
      summary text,
      body_format text NOT NULL DEFAULT 'text' CHECK (body_format IN ('text', 'markdown')),
      image_url text,
      url text,
      project_id text,
      app_id text,
      created_at timestamptz NOT NULL DEFAULT now(),
      withdrawn_at timestamptz
    )`
  yield* sql`CREATE INDEX notifications_user_idx ON notifications (user_id, created_at)`

  // One row per recipient, so each person has independent read state. `seq` is
  // the inbox order and the cursor's key.
  yield* sql`
    CREATE TABLE inbox_items (
      seq bigserial PRIMARY KEY,
      user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      origin text NOT NULL CHECK (origin IN ('event', 'notification')),
      item_id text NOT NULL,
      project_id text,
      source_name text NOT NULL,
      source_image_url text,
      title text NOT NULL,
      preview text NOT NULL,
      body text NOT NULL,
      summary text,
      body_format text NOT NULL DEFAULT 'text' CHECK (body_format IN ('text', 'markdown')),
      url text,
      app_id text,
      read_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (user_id, origin, item_id)
    )`
  yield* sql`CREATE INDEX inbox_items_user_idx ON inbox_items (user_id, seq DESC)`
  yield* sql`CREATE INDEX inbox_items_project_idx ON inbox_items (user_id, project_id, seq DESC)`
  yield* sql`CREATE INDEX inbox_items_unread_idx ON inbox_items (user_id, seq DESC) WHERE read_at IS NULL`

  // The durable push outbox: every device push is a committed row before any
  // answer says "queued". Status: pending (due at next_attempt_at) → sending
  // (claimed; the provider may have it) → accepted | error; a claim that a
  // crash interrupted becomes `unknown` and is never sent again.
  yield* sql`
    CREATE TABLE push_receipts (
      id text PRIMARY KEY,
      user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      device_id text NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
      origin text NOT NULL CHECK (origin IN ('event', 'notification')),
      item_id text NOT NULL,
      purpose text NOT NULL CHECK (purpose IN ('alert', 'withdraw')),
      message jsonb NOT NULL,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'sending', 'accepted', 'error', 'unknown')),
      attempts int NOT NULL DEFAULT 0,
      next_attempt_at timestamptz NOT NULL DEFAULT now(),
      claimed_at timestamptz,
      claimed_by text,
      provider_id text,
      error_code text,
      checked_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX push_receipts_due_idx ON push_receipts (next_attempt_at) WHERE status = 'pending'`
  yield* sql`CREATE INDEX push_receipts_sending_idx ON push_receipts (claimed_at) WHERE status = 'sending'`
  yield* sql`CREATE INDEX push_receipts_item_idx ON push_receipts (item_id, purpose)`

  // decisions.md: same account + route + key within 24 h replays the first response.
  yield* sql`
    CREATE TABLE idempotency_keys (
      user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      route text NOT NULL,
      key text NOT NULL,
      request_hash text NOT NULL,
      state text NOT NULL CHECK (state IN ('running', 'done')),
      response_status int,
      response jsonb,
      created_at timestamptz NOT NULL DEFAULT now(),
      locked_until timestamptz,
      PRIMARY KEY (user_id, route, key)
    )`
  yield* sql`CREATE INDEX idempotency_keys_created_idx ON idempotency_keys (created_at)`

  yield* sql`
    CREATE TABLE activity_feed (
      id text PRIMARY KEY,
      user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      kind text NOT NULL CHECK (kind IN ('notification', 'live_activity', 'response')),
      ref_id text NOT NULL,
      source_name text NOT NULL,
      source_image_url text,
      title text NOT NULL,
      detail text,
      url text,
      result text,
      created_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (user_id, kind, ref_id)
    )`
  yield* sql`CREATE INDEX activity_feed_user_idx ON activity_feed (user_id, created_at DESC, id DESC)`

  yield* sql`
    CREATE TABLE server_secrets (
      name text PRIMARY KEY,
      secret text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
})
