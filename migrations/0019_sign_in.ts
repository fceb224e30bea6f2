/**
 * Sign-in a person can do alone (issue 32): browser sessions keep the user
 * agent they signed in with; passkeys (WebAuthn credentials) with their
 * ceremonies' challenges, kept server-side so any node can finish a ceremony
 * another began, each spent once; and the per-address-mailed window of
 * e-mailed sign-in links, kept here so the limit holds across nodes. An
 * e-mail address is stored only as the SHA-256 of its lower-case form: the
 * limit applies to addresses without an account too (no enumeration), and
 * those are nobody's to keep.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE sessions ADD COLUMN user_agent text`
  // Listing a person's live sessions, most recent first.
  yield* sql`CREATE INDEX sessions_user_live_idx ON sessions (user_id, created_at DESC) WHERE revoked_at IS NULL`

  yield* sql`
    CREATE TABLE passkeys (
      id text PRIMARY KEY,
      user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      credential_id text NOT NULL UNIQUE,
      public_key text NOT NULL,
      counter bigint NOT NULL DEFAULT 0,
      transports text[] NOT NULL DEFAULT '{}',
      name text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      last_used_at timestamptz
    )`
  yield* sql`CREATE INDEX passkeys_user_idx ON passkeys (user_id, created_at DESC)`

  yield* sql`
    CREATE TABLE webauthn_challenges (
      id text PRIMARY KEY,
      purpose text NOT NULL CHECK (purpose IN ('register', 'authenticate')),
      challenge text NOT NULL,
      user_id text REFERENCES users (id) ON DELETE CASCADE,
      expires_at timestamptz NOT NULL,
      CHECK ((purpose = 'register') = (user_id IS NOT NULL))
    )`
  yield* sql`CREATE INDEX webauthn_challenges_expires_idx ON webauthn_challenges (expires_at)`

  yield* sql`
    CREATE TABLE sign_in_email_windows (
      email_hash text PRIMARY KEY,
      window_start timestamptz NOT NULL,
      count int NOT NULL
    )`
  yield* sql`CREATE INDEX sign_in_email_windows_start_idx ON sign_in_email_windows (window_start)`
})
