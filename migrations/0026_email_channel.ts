/**
 * The e-mail fallback channel (issue 34, docs/email.md):
 *
 * - `email_channels`: one row per person who set the channel: whether it is
 *   on, the default delay before a pending prompt is mailed, whether pages
 *   escalate to e-mail, and the address the person proved they read
 *   (`verified_address`, lower case). Mail goes only to the account's address
 *   while it equals the verified one: an unverified address never receives
 *   answer links.
 * - `prompt_email_fallbacks`: the prompts that will be mailed and when,
 *   written with the prompt (so a start can re-send a timer a crash lost).
 * - `mail_outbox`: every mail to send, one row per (purpose, item, person)
 *   (`dedupe_key`), so a timer or page step delivered twice queues one mail.
 *   A worker claims due rows with a lease, sends, then marks them sent.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE email_channels (
      user_id text PRIMARY KEY REFERENCES users (id) ON DELETE CASCADE,
      enabled boolean NOT NULL DEFAULT false,
      prompt_after_seconds int,
      pages boolean NOT NULL DEFAULT true,
      verified_address text,
      verified_at timestamptz,
      verification_sent_at timestamptz,
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`
    CREATE TABLE prompt_email_fallbacks (
      interaction_id text PRIMARY KEY,
      user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      due_at timestamptz NOT NULL
    )`
  yield* sql`
    CREATE TABLE mail_outbox (
      id text PRIMARY KEY,
      user_id text NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      purpose text NOT NULL CHECK (purpose IN ('prompt', 'page', 'verify')),
      ref_id text NOT NULL,
      dedupe_key text NOT NULL UNIQUE,
      to_address text NOT NULL,
      subject text NOT NULL,
      body text NOT NULL,
      status text NOT NULL DEFAULT 'queued' CHECK (status IN ('queued', 'sent', 'failed', 'dropped')),
      attempts int NOT NULL DEFAULT 0,
      next_attempt_at timestamptz NOT NULL DEFAULT now(),
      lease_until timestamptz,
      last_error text,
      created_at timestamptz NOT NULL DEFAULT now(),
      sent_at timestamptz
    )`
  yield* sql`CREATE INDEX mail_outbox_due_idx ON mail_outbox (next_attempt_at) WHERE status = 'queued'`
  // The person's sent count on their settings, and the cascade of a deleted account.
  yield* sql`CREATE INDEX mail_outbox_user_idx ON mail_outbox (user_id, sent_at)`
  yield* sql`CREATE INDEX prompt_email_fallbacks_user_idx ON prompt_email_fallbacks (user_id)`
})
