/**
 * A reply-webhook attempt is recorded as begun, and committed, before its
 * request leaves; the outcome completes it. An attempt still open when its
 * lease lapses was cut short (the node died mid-send): it is logged as
 * interrupted, since the receiver may have got the event. The index holds
 * only the attempts in flight, so finding the cut ones stays cheap.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE reply_webhook_deliveries ADD COLUMN attempt_started_at timestamptz`
  yield* sql`
    CREATE INDEX reply_webhook_deliveries_open_attempt_idx ON reply_webhook_deliveries (leased_until)
    WHERE attempt_started_at IS NOT NULL`
})
