/**
 * Taking an alert back (a prompt that ended, a page that was resolved): its
 * pushes still queued are dropped, and the devices that already got it — to
 * which the removal command goes — are read, in one statement. Shared by the
 * repos of every item that retires its alerts.
 */
import { Effect, Schema } from "effect"
import { SqlSchema } from "effect/sql"
import type { SqlClient } from "effect/sql"

const AlertDevice = Schema.Struct({ deviceId: Schema.String, userId: Schema.String })
export type AlertDevice = typeof AlertDevice.Type

/** The statement for items of `origin`: drops the item's pending alerts, answers the devices that have it. */
export const retireAlertsOf = (sql: SqlClient.SqlClient, origin: "interaction" | "page") => {
  const query = SqlSchema.findAll({
    Request: Schema.String,
    Result: AlertDevice,
    execute: (id) =>
      sql`
        WITH dropped AS (
          UPDATE push_receipts SET status = 'error', error_code = 'Withdrawn', checked_at = now()
          WHERE item_id = ${id} AND origin = ${origin} AND purpose = 'alert' AND status = 'pending'
          RETURNING id),
        dequeued AS (
          DELETE FROM push_queue WHERE receipt_id IN (SELECT id FROM dropped) AND claimed_by IS NULL)
        SELECT DISTINCT r.device_id, r.user_id FROM push_receipts r JOIN devices d ON d.id = r.device_id
        WHERE r.item_id = ${id} AND r.origin = ${origin} AND r.purpose = 'alert' AND r.status IN ('accepted', 'sending')`
  })
  return (id: string): Effect.Effect<ReadonlyArray<AlertDevice>> => Effect.orDie(query(id))
}
