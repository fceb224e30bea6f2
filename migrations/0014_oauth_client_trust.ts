/**
 * Bounded client registration and trusted redirects (issue 30): when a person
 * first approved a client (`approved_at`, set when consent issues a code) and
 * how it was registered (`registered_via`: `open` anyone, `token` with the
 * operator's initial access token, `operator` by `herald admin oauth-client
 * create`). Only an approved or operator-registered client has error
 * redirects sent to it; the others expire sooner and are capped.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  yield* sql`
    ALTER TABLE oauth_clients
      ADD COLUMN approved_at timestamptz,
      ADD COLUMN registered_via text NOT NULL DEFAULT 'open'
        CHECK (registered_via IN ('open', 'token', 'operator'))`

  // A client a person already connected (it has a grant or had a code issued) was approved.
  yield* sql`
    UPDATE oauth_clients c SET approved_at = c.created_at
    WHERE EXISTS (SELECT 1 FROM api_tokens t WHERE t.oauth_client_id = c.id)
       OR EXISTS (SELECT 1 FROM oauth_codes o WHERE o.client_id = c.id)`

  // The clients waiting for a first approval: registration counts them (up to
  // its cap) and the sweep finds the expired ones through this small index.
  yield* sql`
    CREATE INDEX oauth_clients_unapproved_idx ON oauth_clients (created_at)
    WHERE approved_at IS NULL AND registered_via <> 'operator'`

  // The sweep's NOT EXISTS probe of a client's grants.
  yield* sql`CREATE INDEX IF NOT EXISTS api_tokens_oauth_client_idx ON api_tokens (oauth_client_id) WHERE oauth_client_id IS NOT NULL`
})
