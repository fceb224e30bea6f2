/**
 * SQL of the notifications capability: the notification rows and the receipts
 * withdraw reads. Every query is scoped by the caller's account.
 */
import { Array as Arr, Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { makeWriter, write } from "../db/UnitOfWork.ts"

export interface NewNotification {
  readonly id: string
  readonly userId: string
  readonly tokenId: string
  readonly sourceName: string
  readonly title: string
  readonly body: string
  readonly summary: string | null
  readonly bodyFormat: "text" | "markdown"
  readonly imageUrl: string | null
  readonly url: string | null
  readonly projectId: string | null
  readonly appId: string | null
  readonly priority: "low" | "normal" | "high" | "critical" | null
  /** The same instant as its inbox copy and feed entry. */
  readonly createdAt: string
}

/** What a withdraw needs of a notification. */
export const WithdrawTarget = Schema.Struct({
  id: Schema.String,
  /** Devices whose provider accepted the alert, or may be accepting it now: the ones the removal command goes to. */
  acceptedDeviceIds: Schema.Array(Schema.String)
})
export type WithdrawTarget = typeof WithdrawTarget.Type

export class NotificationsRepo extends Context.Service<NotificationsRepo, {
  /** Writes the notification in the caller's unit of work, with the rows that exist with it (inbox copy, feed entry, receipts). */
  readonly insert: (notification: NewNotification) => Effect.Effect<void>
  /** Marks the notification withdrawn and its inbox copy read; none when it is not the account's. */
  readonly withdraw: (userId: string, notificationId: string) => Effect.Effect<WithdrawTarget | undefined>
}>()("herald/NotificationsRepo") {
  static readonly layer = Layer.effect(NotificationsRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const notifications = makeWriter<NewNotification>((rows) =>
      sql`INSERT INTO notifications ${sql.insert(Arr.map(rows, (n) => ({ ...n })))}`
    )

    const withdrawRow = SqlSchema.findOneOption({
      Request: Schema.Struct({ userId: Schema.String, id: Schema.String }),
      Result: WithdrawTarget,
      execute: ({ id, userId }) => sql`
        WITH n AS (
          UPDATE notifications SET withdrawn_at = COALESCE(withdrawn_at, now())
          WHERE id = ${id} AND user_id = ${userId} RETURNING id),
        inbox AS (
          UPDATE inbox_items SET read_at = COALESCE(read_at, now())
          WHERE user_id = ${userId} AND origin = 'notification' AND item_id IN (SELECT id FROM n)),
        -- Alerts still queued are not sent at all.
        canceled AS (
          UPDATE push_receipts SET status = 'error', error_code = 'Withdrawn', checked_at = now()
          WHERE item_id IN (SELECT id FROM n) AND purpose = 'alert' AND status = 'pending'
          RETURNING id),
        dequeued AS (
          DELETE FROM push_queue WHERE receipt_id IN (SELECT id FROM canceled) AND claimed_by IS NULL)
        SELECT n.id, COALESCE(
          (SELECT array_agg(DISTINCT r.device_id) FROM push_receipts r JOIN devices d ON d.id = r.device_id
           WHERE r.item_id = n.id AND r.purpose = 'alert' AND r.status IN ('accepted', 'sending')),
          ARRAY[]::text[]) AS accepted_device_ids
        FROM n`
    })
    const withdraw = (userId: string, id: string) =>
      withdrawRow({ userId, id }).pipe(Effect.map(Option.getOrUndefined), Effect.orDie)

    return NotificationsRepo.of({ insert: (notification) => write(notifications, [notification]), withdraw })
  }))
}
