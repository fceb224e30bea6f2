/**
 * Accounts, sessions, API tokens (with the OAuth client and refresh-grant rows a
 * later OAuth flow uses), devices, and the sandbox push provider's record.
 * Secrets are stored only as SHA-256 hashes (hex).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE users (
      id text PRIMARY KEY,
      email text NOT NULL,
      name text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE UNIQUE INDEX users_email_key ON users (lower(email))`

  yield* sql`
    CREATE TABLE sessions (
      id text PRIMARY KEY,
      user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      token_hash text NOT NULL UNIQUE,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz,
      last_used_at timestamptz,
      revoked_at timestamptz
    )`
  yield* sql`CREATE INDEX sessions_user_idx ON sessions (user_id)`

  yield* sql`
    CREATE TABLE oauth_clients (
      id text PRIMARY KEY,
      name text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`

  yield* sql`
    CREATE TABLE api_tokens (
      id text PRIMARY KEY,
      user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      name text NOT NULL,
      prefix text NOT NULL,
      token_hash text NOT NULL UNIQUE,
      scopes text[] NOT NULL,
      kind text NOT NULL DEFAULT 'token' CHECK (kind IN ('token', 'oauth')),
      oauth_client_id text REFERENCES oauth_clients (id) ON DELETE CASCADE,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz,
      last_used_at timestamptz,
      revoked_at timestamptz,
      CHECK ((kind = 'oauth') = (oauth_client_id IS NOT NULL))
    )`
  yield* sql`CREATE INDEX api_tokens_user_idx ON api_tokens (user_id, created_at DESC)`
  // The revocation poller asks "what was revoked since t" every few hundred ms.
  yield* sql`CREATE INDEX api_tokens_revoked_idx ON api_tokens (revoked_at) WHERE revoked_at IS NOT NULL`
  yield* sql`CREATE INDEX sessions_revoked_idx ON sessions (revoked_at) WHERE revoked_at IS NOT NULL`

  // The refresh half of an OAuth grant; revoking the access token revokes it too.
  yield* sql`
    CREATE TABLE oauth_refresh_grants (
      id text PRIMARY KEY,
      token_id text NOT NULL REFERENCES api_tokens (id) ON DELETE CASCADE,
      token_hash text NOT NULL UNIQUE,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz,
      revoked_at timestamptz
    )`
  yield* sql`CREATE INDEX oauth_refresh_grants_token_idx ON oauth_refresh_grants (token_id)`

  yield* sql`
    CREATE TABLE devices (
      id text PRIMARY KEY,
      user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      platform text NOT NULL CHECK (platform IN ('ios', 'android')),
      device_name text,
      push_token text NOT NULL,
      push_to_start_token text,
      active boolean NOT NULL DEFAULT true,
      live_activities_capable boolean NOT NULL DEFAULT false,
      interactive_live_activities_capable boolean NOT NULL DEFAULT false,
      live_activity_token_environment text CHECK (live_activity_token_environment IN ('sandbox', 'production')),
      live_activity_token_updated_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      last_seen_at timestamptz NOT NULL DEFAULT now()
    )`
  // A push token names one app install.
  yield* sql`CREATE UNIQUE INDEX devices_push_token_key ON devices (platform, push_token)`
  yield* sql`CREATE INDEX devices_user_idx ON devices (user_id, created_at DESC)`

  yield* sql`
    CREATE TABLE push_sandbox_deliveries (
      id text PRIMARY KEY,
      device_id text NOT NULL,
      push_type text NOT NULL,
      priority int NOT NULL,
      payload jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX push_sandbox_deliveries_device_idx ON push_sandbox_deliveries (device_id, id)`
})
