/**
 * SQL of the notifications capability: the notification rows, the devices a
 * push goes to, and the receipts withdraw reads. Every query is scoped by the
 * caller's account.
 */
import { AgentNotification } from "@herald/api"
import { Array as Arr, Context, Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import type { Statement } from "effect/sql"
import { batched } from "../db/Batching.ts"
import { alongsideMembers } from "../db/Statements.ts"

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
  /** The same instant as its inbox copy and feed entry. */
  readonly createdAt: string
}

/** A device as a push needs it. */
export const TargetDevice = Schema.Struct({ id: Schema.String, userId: Schema.String })
export type TargetDevice = typeof TargetDevice.Type

/** What a withdraw needs of a notification. */
export const WithdrawTarget = Schema.Struct({
  id: Schema.String,
  /** Devices whose provider accepted the alert, or may be accepting it now: the ones the removal command goes to. */
  acceptedDeviceIds: Schema.Array(Schema.String)
})
export type WithdrawTarget = typeof WithdrawTarget.Type

const notificationColumns = (sql: SqlClient.SqlClient) => sql`
  id, title, body, image_url, url, created_at, project_id, summary, body_format, app_id`

/** Optional fields the caller did not set stay off the record (`appId` is not nullable). */
const NotificationRow = Schema.Struct({
  id: Schema.String,
  title: Schema.String,
  body: Schema.String,
  imageUrl: Schema.NullOr(Schema.String),
  url: Schema.NullOr(Schema.String),
  createdAt: Schema.String,
  projectId: Schema.NullOr(Schema.String),
  summary: Schema.NullOr(Schema.String),
  bodyFormat: Schema.Literals(["text", "markdown"]),
  appId: Schema.NullOr(Schema.String)
})

const toRecord = (row: typeof NotificationRow.Type): AgentNotification => {
  const { appId, ...rest } = row
  return new AgentNotification({ ...rest, ...(appId !== null ? { appId } : {}) }, { disableChecks: true })
}

export class NotificationsRepo extends Context.Service<NotificationsRepo, {
  /**
   * Inserts notifications and, in the same statement, the other rows that
   * must exist with them (inbox copies, feed entries, push receipts), so the
   * hottest write of the service is one round trip and atomic. Answers the
   * records in the order given.
   */
  readonly insert: (
    notifications: Arr.NonEmptyReadonlyArray<NewNotification>,
    alongside: ReadonlyArray<Statement.Statement<unknown>>
  ) => Effect.Effect<ReadonlyArray<AgentNotification>>
  /** The account's active devices, or exactly `deviceIds` when every one is the account's (else none). */
  readonly targets: (userId: string, deviceIds: ReadonlyArray<string> | undefined) => Effect.Effect<ReadonlyArray<TargetDevice> | undefined>
  /** Marks the notification withdrawn and its inbox copy read; none when it is not the account's. */
  readonly withdraw: (userId: string, notificationId: string) => Effect.Effect<WithdrawTarget | undefined>
}>()("herald/NotificationsRepo") {
  static readonly layer = Layer.effect(NotificationsRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const decodeRows = Schema.decodeUnknownEffect(Schema.Array(NotificationRow))
    const insert = (notifications: Arr.NonEmptyReadonlyArray<NewNotification>, alongside: ReadonlyArray<Statement.Statement<unknown>>) => {
      return sql`
        WITH n AS (
          INSERT INTO notifications ${sql.insert(Arr.map(notifications, (n) => ({ ...n })))}
          RETURNING ${notificationColumns(sql)})
        ${alongsideMembers(sql, alongside)}
        SELECT * FROM n`.pipe(
        Effect.flatMap(decodeRows),
        Effect.map((rows) => {
          const byId = new Map(rows.map((row) => [row.id, toRecord(row)]))
          return notifications.map((n) => byId.get(n.id)!)
        }),
        Effect.orDie
      )
    }

    const decodeTargets = Schema.decodeUnknownSync(Schema.Array(TargetDevice))
    // Concurrent sends look up their accounts' devices in one statement.
    const activeDevices = batched((userIds: Arr.NonEmptyReadonlyArray<string>) =>
      sql`SELECT id, user_id FROM devices WHERE user_id = ANY(${[...new Set(userIds)]}::text[]) AND active
          ORDER BY created_at, id`.pipe(
        Effect.map((rows) => {
          const devices = decodeTargets(rows)
          return userIds.map((userId) => devices.filter((d) => d.userId === userId))
        }),
        Effect.orDie
      )
    )
    const targets = (userId: string, deviceIds: ReadonlyArray<string> | undefined) =>
      deviceIds === undefined ? activeDevices(userId) : sql`
        SELECT id, user_id FROM devices WHERE user_id = ${userId} AND id = ANY(${[...new Set(deviceIds)]}::text[])
        ORDER BY created_at, id`.pipe(
        Effect.map(decodeTargets),
        Effect.map((rows) => rows.length !== new Set(deviceIds).size ? undefined : rows),
        Effect.orDie
      )

    const withdrawRow = SqlSchema.findAll({
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
          WHERE item_id IN (SELECT id FROM n) AND purpose = 'alert' AND status = 'pending')
        SELECT n.id, COALESCE(
          (SELECT array_agg(DISTINCT r.device_id) FROM push_receipts r JOIN devices d ON d.id = r.device_id
           WHERE r.item_id = n.id AND r.purpose = 'alert' AND r.status IN ('accepted', 'sending')),
          ARRAY[]::text[]) AS accepted_device_ids
        FROM n`
    })
    const withdraw = (userId: string, id: string) =>
      withdrawRow({ userId, id }).pipe(Effect.map((rows) => rows[0]), Effect.orDie)

    return NotificationsRepo.of({ insert, targets, withdraw })
  }))
}
