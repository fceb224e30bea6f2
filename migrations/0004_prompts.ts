/**
 * Prompts and reply webhooks (and the live-activity tables an interactive
 * prompt card shares with live activities).
 *
 * A prompt's status changes once, by a conditional UPDATE (`WHERE status =
 * 'pending'`), in the same statement that writes its outcome deliveries: the
 * first answer wins and every transition has its events, or neither exists.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  // Signing secrets and header values must be readable to sign and send, so
  // they are stored as given; reads never return them.
  yield* sql`
    CREATE TABLE reply_webhooks (
      id text PRIMARY KEY,
      user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      name text NOT NULL,
      url text NOT NULL,
      preset text NOT NULL CHECK (preset IN ('generic', 'assistant', 'chat')),
      headers jsonb NOT NULL DEFAULT '[]',
      events text[] NOT NULL,
      enabled boolean NOT NULL DEFAULT true,
      is_default boolean NOT NULL DEFAULT false,
      signing_secret text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX reply_webhooks_user_idx ON reply_webhooks (user_id, created_at DESC)`
  // One account default at most.
  yield* sql`CREATE UNIQUE INDEX reply_webhooks_default_key ON reply_webhooks (user_id) WHERE is_default`

  yield* sql`
    ALTER TABLE services ADD CONSTRAINT services_default_reply_webhook_fkey
      FOREIGN KEY (default_reply_webhook_id) REFERENCES reply_webhooks (id) ON DELETE SET NULL`

  yield* sql`
    CREATE TABLE interactions (
      id text PRIMARY KEY,
      user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      -- wait, read and cancel belong to the creating token; no FK, so a revoked
      -- or deleted token's prompts still end and report.
      token_id text NOT NULL,
      source_name text NOT NULL,
      service_id text REFERENCES services (id) ON DELETE SET NULL,
      webhook_id text REFERENCES reply_webhooks (id) ON DELETE SET NULL,
      kind text NOT NULL CHECK (kind IN ('approval', 'yes_no', 'reply')),
      presentation text NOT NULL CHECK (presentation IN ('notification', 'live_activity')),
      title text NOT NULL,
      prompt text NOT NULL,
      choices jsonb NOT NULL DEFAULT '[]',
      image_url text,
      url text,
      primary_label text,
      secondary_label text,
      project_id text,
      action_digest text NOT NULL,
      status text NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'approved', 'denied', 'yes', 'no', 'replied', 'canceled', 'expired')),
      response text,
      responding_device_id text,
      responding_user_id text,
      live_activity_id text,
      expires_at timestamptz NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      responded_at timestamptz,
      canceled_at timestamptz
    )`
  yield* sql`CREATE INDEX interactions_pending_idx ON interactions (user_id, created_at DESC) WHERE status = 'pending'`

  // One row per (event, endpoint): the dedup rule of reply events is the key.
  yield* sql`
    CREATE TABLE reply_webhook_deliveries (
      id text PRIMARY KEY,
      user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      webhook_id text REFERENCES reply_webhooks (id) ON DELETE SET NULL,
      interaction_id text REFERENCES interactions (id) ON DELETE CASCADE,
      type text NOT NULL CHECK (type IN ('interaction.answered', 'interaction.expired', 'interaction.canceled')),
      payload text NOT NULL,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'retrying', 'delivered', 'failed', 'canceled')),
      attempts int NOT NULL DEFAULT 0,
      attempt_log jsonb NOT NULL DEFAULT '[]',
      response_code int,
      latency_ms int,
      error text,
      next_attempt_at timestamptz,
      -- A worker's lease on the row while it sends; a crash lets it lapse and
      -- the delivery is sent again with the same webhook-id (at-least-once).
      leased_until timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      delivered_at timestamptz,
      UNIQUE (interaction_id, webhook_id)
    )`
  yield* sql`CREATE INDEX reply_webhook_deliveries_webhook_idx ON reply_webhook_deliveries (webhook_id, created_at DESC)`
  yield* sql`
    CREATE INDEX reply_webhook_deliveries_due_idx ON reply_webhook_deliveries (next_attempt_at)
    WHERE status IN ('pending', 'retrying')`

  // Prompts reach phones through the same outbox and inbox as other pushes.
  yield* sql`ALTER TABLE push_receipts DROP CONSTRAINT push_receipts_origin_check`
  yield* sql`ALTER TABLE push_receipts ADD CONSTRAINT push_receipts_origin_check
    CHECK (origin IN ('event', 'notification', 'interaction'))`
  yield* sql`ALTER TABLE inbox_items DROP CONSTRAINT inbox_items_origin_check`
  yield* sql`ALTER TABLE inbox_items ADD CONSTRAINT inbox_items_origin_check
    CHECK (origin IN ('event', 'notification', 'interaction'))`

  // Live activities: a progress card or an interactive prompt card, shown on
  // each target device (at most five concurrent per device).
  yield* sql`
    CREATE TABLE live_activities (
      id text PRIMARY KEY,
      user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      token_id text NOT NULL,
      key text,
      interaction_id text REFERENCES interactions (id) ON DELETE CASCADE,
      props jsonb NOT NULL,
      status text NOT NULL DEFAULT 'starting'
        CHECK (status IN ('starting', 'active', 'partial', 'failed', 'ended', 'expired')),
      sequence int NOT NULL DEFAULT 0,
      -- Epoch milliseconds of the milestones granted within the last hour (the budget's memory).
      milestone_grants bigint[] NOT NULL DEFAULT '{}',
      expires_at timestamptz NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      ended_at timestamptz
    )`
  yield* sql`
    CREATE UNIQUE INDEX live_activities_key ON live_activities (token_id, key)
    WHERE key IS NOT NULL AND status NOT IN ('ended', 'expired', 'failed')`

  // Per target device: its place in the capacity count and its ordered queue.
  yield* sql`
    CREATE TABLE live_activity_targets (
      activity_id text NOT NULL REFERENCES live_activities (id) ON DELETE CASCADE,
      device_id text NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
      status text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'active', 'ended', 'failed')),
      -- The iOS update token of this activity on this device (updates and ends need it).
      update_token text,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (activity_id, device_id)
    )`
  yield* sql`CREATE INDEX live_activity_targets_device_idx ON live_activity_targets (device_id) WHERE status IN ('queued', 'active')`

  yield* sql`
    CREATE TABLE live_activity_operations (
      id text PRIMARY KEY,
      activity_id text NOT NULL REFERENCES live_activities (id) ON DELETE CASCADE,
      device_id text NOT NULL REFERENCES devices (id) ON DELETE CASCADE,
      seq int NOT NULL,
      op text NOT NULL CHECK (op IN ('start', 'update', 'end')),
      priority int NOT NULL CHECK (priority IN (5, 10)),
      priority_reason text NOT NULL,
      payload jsonb NOT NULL,
      status text NOT NULL DEFAULT 'queued'
        CHECK (status IN ('queued', 'sending', 'accepted', 'failed', 'superseded', 'expired', 'unknown')),
      attempts int NOT NULL DEFAULT 0,
      next_attempt_at timestamptz NOT NULL DEFAULT now(),
      error_code text,
      created_at timestamptz NOT NULL DEFAULT now(),
      sent_at timestamptz,
      UNIQUE (activity_id, device_id, seq)
    )`
  yield* sql`
    CREATE INDEX live_activity_operations_queued_idx ON live_activity_operations (activity_id, device_id, seq)
    WHERE status IN ('queued', 'sending')`
  // A mutation's outcome (by sequence) and the activity's accepted starts, without
  // reading every operation the activity ever had.
  yield* sql`CREATE INDEX live_activity_operations_seq_idx ON live_activity_operations (activity_id, seq)`
  yield* sql`CREATE INDEX live_activity_operations_start_idx ON live_activity_operations (activity_id) WHERE op = 'start'`
})
