/**
 * SQL of saved reply webhooks. Every read and write of a webhook is scoped by
 * the account in SQL; every row is decoded with a schema built from the
 * contract's `ReplyWebhook.fields`, and header values leave redacted. The
 * deliveries queue has its own repo (`DeliveriesRepo.ts`).
 */
import { ReplyEventType, ReplyWebhook, ReplyWebhookHeader, ReplyWebhookPreset } from "@herald/api"
import type { LimitReached } from "@herald/api"
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { countLocked, insertWithinLimit, lockAccount, LockSpace } from "../db/AccountLocks.ts"
import type { Routing } from "../interactions/InteractionsRepo.ts"
import { cancelPending } from "./DeliveriesRepo.ts"

export interface WebhookFields {
  readonly name: string
  readonly url: string
  readonly preset: ReplyWebhookPreset
  readonly headers: ReadonlyArray<{ readonly name: string; readonly value: string }>
  readonly events: ReadonlyArray<ReplyEventType>
  readonly enabled: boolean
  readonly isDefault: boolean
}

export type NewWebhook = WebhookFields & { readonly id: string; readonly userId: string; readonly signingSecret: string }

/** A webhook an outcome event goes to. */
export const EventTarget = Schema.Struct({ id: Schema.String, preset: ReplyWebhookPreset })
export type EventTarget = typeof EventTarget.Type

const REDACTED = "[redacted]"

/** The stored row: the record's fields, header values as saved. */
const WebhookRow = Schema.Struct(ReplyWebhook.fields)

const toWebhook = (row: typeof WebhookRow.Type) =>
  new ReplyWebhook({ ...row, headers: row.headers.map((h) => new ReplyWebhookHeader({ name: h.name, value: REDACTED })) })

const Owned = Schema.Struct({ userId: Schema.String, id: Schema.String })
const TargetsRequest = Schema.Struct({
  userId: Schema.String,
  webhookId: Schema.NullOr(Schema.String),
  serviceId: Schema.NullOr(Schema.String),
  type: ReplyEventType
})

const webhookColumns = "id, name, url, preset, headers, events, enabled, is_default, created_at, updated_at"

export class WebhooksRepo extends Context.Service<WebhooksRepo, {
  readonly list: (userId: string) => Effect.Effect<ReadonlyArray<ReplyWebhook>>
  readonly find: (userId: string, id: string) => Effect.Effect<ReplyWebhook | undefined>
  readonly exists: (userId: string, id: string) => Effect.Effect<boolean>
  /**
   * Inserts once the account's count (under its lock) is below `limit`;
   * `isDefault` clears the flag on the account's other webhook in the same transaction.
   */
  readonly create: (row: NewWebhook, limit: number) => Effect.Effect<ReplyWebhook, LimitReached>
  /** Changes the given fields; disabling cancels pending deliveries. None when not the account's. */
  readonly update: (userId: string, id: string, patch: Partial<WebhookFields>) => Effect.Effect<ReplyWebhook | undefined>
  /** Cancels pending deliveries and deletes; false when not the account's. */
  readonly remove: (userId: string, id: string) => Effect.Effect<boolean>
  readonly rotateSecret: (userId: string, id: string, secret: string) => Effect.Effect<ReplyWebhook | undefined>
  /** The enabled webhooks subscribed to `type` among the prompt's own, its service's default and the account default. */
  readonly targets: (routing: Routing, type: ReplyEventType) => Effect.Effect<ReadonlyArray<EventTarget>>
  /** 410 Gone: the receiver asked to stop; its pending deliveries are canceled. */
  readonly disable: (webhookId: string) => Effect.Effect<void>
}>()("herald/WebhooksRepo") {
  static readonly layer = Layer.effect(WebhooksRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = sql.literal(webhookColumns)

    const decodeWebhooks = Schema.decodeUnknownEffect(Schema.Array(WebhookRow))
    /** The rows of a statement that returns `webhookColumns`, decoded and redacted. */
    const webhooks = <E>(query: Effect.Effect<ReadonlyArray<unknown>, E>) =>
      query.pipe(Effect.flatMap(decodeWebhooks), Effect.map((rows) => rows.map(toWebhook)), Effect.orDie)
    const first = <A>(rows: ReadonlyArray<A>) => rows[0]

    const owned = SqlSchema.findAll({
      Request: Owned,
      Result: Schema.Struct({ id: Schema.String }),
      execute: ({ id, userId }) => sql`SELECT id FROM reply_webhooks WHERE id = ${id} AND user_id = ${userId} FOR UPDATE`
    })
    const isOwned = (userId: string, id: string) => owned({ userId, id }).pipe(Effect.map((rows) => rows.length > 0))

    const clearOtherDefaults = (userId: string, id: string) =>
      sql`UPDATE reply_webhooks SET is_default = false, updated_at = now()
          WHERE user_id = ${userId} AND is_default AND id <> ${id}`

    /** The account's webhooks, counted under its lock (in the caller's transaction, before its insert). */
    const lockAndCount = (userId: string) =>
      countLocked(sql, LockSpace.replyWebhooks, userId, sql`SELECT count(*)::int AS n FROM reply_webhooks WHERE user_id = ${userId}`)

    const insert = (row: NewWebhook) => webhooks(sql`
      INSERT INTO reply_webhooks (id, user_id, name, url, preset, headers, events, enabled, is_default, signing_secret)
      VALUES (${row.id}, ${row.userId}, ${row.name}, ${row.url}, ${row.preset}, ${JSON.stringify(row.headers)}::jsonb,
              ${[...row.events]}::text[], ${row.enabled}, ${row.isDefault}, ${row.signingSecret})
      RETURNING ${columns}`)

    const create = (row: NewWebhook, limit: number) =>
      insertWithinLimit(sql, { count: lockAndCount(row.userId), limit, what: "reply webhooks" }, Effect.gen(function*() {
        if (row.isDefault) yield* clearOtherDefaults(row.userId, row.id).pipe(Effect.orDie)
        return (yield* insert(row))[0]!
      }))

    const patchRow = (userId: string, id: string, patch: Partial<WebhookFields>) => {
      const sets = [
        sql`updated_at = now()`,
        ...(patch.name !== undefined ? [sql`name = ${patch.name}`] : []),
        ...(patch.url !== undefined ? [sql`url = ${patch.url}`] : []),
        ...(patch.preset !== undefined ? [sql`preset = ${patch.preset}`] : []),
        ...(patch.headers !== undefined ? [sql`headers = ${JSON.stringify(patch.headers)}::jsonb`] : []),
        ...(patch.events !== undefined ? [sql`events = ${[...patch.events]}::text[]`] : []),
        ...(patch.enabled !== undefined ? [sql`enabled = ${patch.enabled}`] : []),
        ...(patch.isDefault !== undefined ? [sql`is_default = ${patch.isDefault}`] : [])
      ]
      return webhooks(sql`UPDATE reply_webhooks SET ${sql.join(", ", false)(sets)}
                          WHERE id = ${id} AND user_id = ${userId} RETURNING ${columns}`)
    }

    const update: WebhooksRepo["Service"]["update"] = (userId, id, patch) =>
      sql.withTransaction(Effect.gen(function*() {
        if (patch.isDefault === true) {
          // Under the account's lock (creates take it too), so two new defaults never meet at the unique
          // index; and only once the webhook is known to be the account's, so a wrong id changes nothing.
          yield* lockAccount(sql, LockSpace.replyWebhooks, userId)
          if (!(yield* isOwned(userId, id))) return undefined
          yield* clearOtherDefaults(userId, id)
        }
        const webhook = first(yield* patchRow(userId, id, patch))
        if (webhook !== undefined && patch.enabled === false) yield* cancelPending(sql, id)
        return webhook
      })).pipe(Effect.orDie)

    const remove = (userId: string, id: string) =>
      sql.withTransaction(Effect.gen(function*() {
        if (!(yield* isOwned(userId, id))) return false
        yield* cancelPending(sql, id)
        yield* sql`DELETE FROM reply_webhooks WHERE id = ${id} AND user_id = ${userId}`
        return true
      })).pipe(Effect.orDie)


    const exists = SqlSchema.findAll({
      Request: Owned,
      Result: Schema.Struct({ id: Schema.String }),
      execute: ({ id, userId }) => sql`SELECT id FROM reply_webhooks WHERE id = ${id} AND user_id = ${userId}`
    })

    const targets = SqlSchema.findAll({
      Request: TargetsRequest,
      Result: EventTarget,
      execute: (r) => sql`
        SELECT DISTINCT w.id, w.preset FROM reply_webhooks w
        WHERE w.user_id = ${r.userId} AND w.enabled AND ${r.type} = ANY(w.events)
          AND (w.is_default
            OR w.id = ${r.webhookId}
            OR w.id = (SELECT s.default_reply_webhook_id FROM services s
                       WHERE s.id = ${r.serviceId} AND s.user_id = ${r.userId}))
        ORDER BY w.id`
    })

    const disable = (webhookId: string) =>
      sql.withTransaction(
        sql`UPDATE reply_webhooks SET enabled = false, updated_at = now() WHERE id = ${webhookId}`.pipe(
          Effect.andThen(cancelPending(sql, webhookId))
        )
      ).pipe(Effect.asVoid, Effect.orDie)

    return WebhooksRepo.of({
      list: (userId) =>
        webhooks(sql`SELECT ${columns} FROM reply_webhooks WHERE user_id = ${userId} ORDER BY created_at DESC, id DESC`),
      find: (userId, id) =>
        webhooks(sql`SELECT ${columns} FROM reply_webhooks WHERE id = ${id} AND user_id = ${userId}`).pipe(Effect.map(first)),
      exists: (userId, id) => exists({ userId, id }).pipe(Effect.map((rows) => rows.length > 0), Effect.orDie),
      create,
      update,
      remove,
      rotateSecret: (userId, id, secret) =>
        webhooks(sql`UPDATE reply_webhooks SET signing_secret = ${secret}, updated_at = now()
                     WHERE id = ${id} AND user_id = ${userId} RETURNING ${columns}`).pipe(Effect.map(first)),
      targets: (routing, type) =>
        targets({ userId: routing.userId, webhookId: routing.webhookId, serviceId: routing.serviceId, type }).pipe(Effect.orDie),
      disable
    })
  }))
}
