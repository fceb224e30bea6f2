/**
 * Web Push (issue 32): a browser's push subscription is a device of platform
 * `web`. Its endpoint is the device's push token (unique per platform, as a
 * phone's token is) and the keys its payloads are encrypted to (RFC 8291) sit
 * on the same row, so a claimed push carries everything its send needs. The
 * service's VAPID key pairs (RFC 8292) are kept like the mini-app signing
 * keys: made on first use, one current, a rotation retires it and keeps it
 * (browsers subscribed with it must subscribe again).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  yield* sql`ALTER TABLE devices DROP CONSTRAINT devices_platform_check`
  yield* sql`ALTER TABLE devices ADD CONSTRAINT devices_platform_check CHECK (platform IN ('ios', 'android', 'web'))`
  // base64url, as the browser's PushSubscription.toJSON() gives them.
  yield* sql`ALTER TABLE devices ADD COLUMN web_push_p256dh text`
  yield* sql`ALTER TABLE devices ADD COLUMN web_push_auth text`
  yield* sql`
    ALTER TABLE devices ADD CONSTRAINT devices_web_push_keys_check
      CHECK ((platform = 'web') = (web_push_p256dh IS NOT NULL AND web_push_auth IS NOT NULL))`

  yield* sql`
    CREATE TABLE web_push_keys (
      key_id text PRIMARY KEY,
      -- The uncompressed P-256 point (65 bytes) and the private scalar (32 bytes), base64url.
      public_key text NOT NULL,
      private_key text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      retired_at timestamptz
    )`
  // One current (unretired) key at a time.
  yield* sql`CREATE UNIQUE INDEX web_push_keys_one_current ON web_push_keys ((true)) WHERE retired_at IS NULL`
})
