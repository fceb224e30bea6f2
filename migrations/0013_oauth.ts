/**
 * OAuth 2.1 for remote-tool clients: registered clients (dynamic client
 * registration), one-time authorization codes bound to a PKCE challenge,
 * short-lived access tokens and rotating refresh tokens of a grant (an
 * `api_tokens` row of kind `oauth`), and one-time sign-in links for the
 * consent page. Every secret is stored as its SHA-256 hash only.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  // The client's registered metadata. `secret_hash` is set for a confidential
  // client (`client_secret_post` / `client_secret_basic`), NULL for a public one.
  yield* sql`
    ALTER TABLE oauth_clients
      ADD COLUMN redirect_uris text[] NOT NULL DEFAULT '{}',
      ADD COLUMN token_endpoint_auth_method text NOT NULL DEFAULT 'none'
        CHECK (token_endpoint_auth_method IN ('none', 'client_secret_post', 'client_secret_basic')),
      ADD COLUMN secret_hash text,
      ADD COLUMN client_uri text,
      ADD COLUMN scope text`
  yield* sql`CREATE INDEX oauth_clients_created_idx ON oauth_clients (created_at)`

  // An authorization code: one use, minutes long, bound to its client,
  // redirect URI, PKCE challenge (S256) and the scopes the person approved.
  // `token_id` is the grant it was exchanged for, so a replay can revoke it.
  yield* sql`
    CREATE TABLE oauth_codes (
      code_hash text PRIMARY KEY,
      client_id text NOT NULL REFERENCES oauth_clients (id) ON DELETE CASCADE,
      user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      redirect_uri text NOT NULL,
      code_challenge text NOT NULL,
      scopes text[] NOT NULL,
      resource text,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL,
      used_at timestamptz,
      token_id text REFERENCES api_tokens (id) ON DELETE CASCADE
    )`
  yield* sql`CREATE INDEX oauth_codes_expires_idx ON oauth_codes (expires_at)`

  // Access tokens of a grant: the grant's row in api_tokens is the ApiToken
  // that GET /tokens lists and DELETE /tokens/{id} revokes; each access token
  // carries its own (possibly narrower) scopes and a short expiry.
  yield* sql`
    CREATE TABLE oauth_access_tokens (
      token_hash text PRIMARY KEY,
      token_id text NOT NULL REFERENCES api_tokens (id) ON DELETE CASCADE,
      scopes text[] NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX oauth_access_tokens_token_idx ON oauth_access_tokens (token_id)`
  yield* sql`CREATE INDEX oauth_access_tokens_expires_idx ON oauth_access_tokens (expires_at)`

  // Refresh tokens rotate: each use marks the row used and issues a new one;
  // presenting a used one again revokes the whole grant.
  yield* sql`
    ALTER TABLE oauth_refresh_grants
      ADD COLUMN scopes text[] NOT NULL DEFAULT '{}',
      ADD COLUMN used_at timestamptz`

  // One-time sign-in links (`herald admin session link`) for the consent page.
  yield* sql`
    CREATE TABLE sign_in_links (
      token_hash text PRIMARY KEY,
      user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL,
      used_at timestamptz
    )`
  yield* sql`CREATE INDEX sign_in_links_expires_idx ON sign_in_links (expires_at)`
})
