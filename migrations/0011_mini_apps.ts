/**
 * Mini-app packages: the service's Ed25519 signing keys (kept in the
 * database; a rotation retires the current key and old signatures stay
 * valid), immutable personal packages stored byte for byte with their
 * signature, and reports about them.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  yield* sql`
    CREATE TABLE mini_app_keys (
      key_id text PRIMARY KEY,
      algorithm text NOT NULL DEFAULT 'Ed25519' CHECK (algorithm = 'Ed25519'),
      public_key text NOT NULL,
      private_key text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      retired_at timestamptz
    )`
  // One current (unretired) key at a time.
  yield* sql`CREATE UNIQUE INDEX mini_app_keys_one_current ON mini_app_keys ((true)) WHERE retired_at IS NULL`

  yield* sql`
    CREATE TABLE mini_app_packages (
      id text PRIMARY KEY,
      user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      app_id text NOT NULL,
      version text NOT NULL,
      manifest jsonb NOT NULL,
      archive bytea NOT NULL,
      archive_bytes integer NOT NULL,
      archive_sha256 text NOT NULL,
      signature text NOT NULL,
      key_id text NOT NULL REFERENCES mini_app_keys (key_id),
      review_state text NOT NULL DEFAULT 'personal-only'
        CHECK (review_state IN ('personal-only', 'blocked', 'disabled', 'removed')),
      last_offered_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  // decisions.md: publishing identical bytes again answers the existing package.
  yield* sql`CREATE UNIQUE INDEX mini_app_packages_bytes_key ON mini_app_packages (user_id, archive_sha256)`
  yield* sql`CREATE INDEX mini_app_packages_user_idx ON mini_app_packages (user_id, id DESC)`

  yield* sql`
    CREATE TABLE mini_app_reports (
      id text PRIMARY KEY,
      package_id text NOT NULL REFERENCES mini_app_packages (id) ON DELETE CASCADE,
      user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      reason text NOT NULL,
      detail text,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX mini_app_reports_package_idx ON mini_app_reports (package_id)`

  // An offer pushes a package's availability through the outbox: its receipts name the package.
  yield* sql`ALTER TABLE push_receipts DROP CONSTRAINT push_receipts_origin_check`
  yield* sql`ALTER TABLE push_receipts ADD CONSTRAINT push_receipts_origin_check
    CHECK (origin IN ('event', 'notification', 'interaction', 'page', 'mini-app'))`
})
