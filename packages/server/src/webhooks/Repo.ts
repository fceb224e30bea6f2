/**
 * SQL of reply webhooks and their deliveries. Every read and write of a
 * webhook is scoped by the account in SQL. Deliveries are a durable queue:
 * a worker leases due rows (`FOR UPDATE SKIP LOCKED`), sends, and appends the
 * attempt to the row's log; a lease that lapses (the node died mid-send) makes
 * the row due again, sent with the same id (at-least-once).
 */
import { ReplyWebhook, ReplyWebhookDelivery } from "@herald/api"
import type { ReplyEventType, ReplyWebhookAttempt, ReplyWebhookPreset } from "@herald/api"
import { Array as Arr, Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { lockAccount, LockSpace } from "../db/AccountLocks.ts"
import type { Routing } from "../interactions/Repo.ts"

export interface WebhookFields {
  readonly name: string
  readonly url: string
  readonly preset: ReplyWebhookPreset
  readonly headers: ReadonlyArray<{ readonly name: string; readonly value: string }>
  readonly events: ReadonlyArray<ReplyEventType>
  readonly enabled: boolean
  readonly isDefault: boolean
}

export interface NewDelivery {
  readonly id: string
  readonly userId: string
  readonly webhookId: string
  readonly interactionId: string | null
  readonly type: ReplyEventType
  readonly payload: string
  /** Null: not queued for the worker (a sample event, sent during its request). */
  readonly nextAttemptAt: string | null
}

/** A leased delivery with what sending it needs, read at send time (so a rotated secret applies to retries). */
export interface DueDelivery {
  readonly id: string
  readonly webhookId: string
  readonly payload: string
  readonly attempts: number
  readonly url: string
  readonly headers: ReadonlyArray<{ readonly name: string; readonly value: string }>
  readonly signingSecret: string
}

export interface AttemptRecord {
  readonly entry: typeof ReplyWebhookAttempt.Type
  readonly status: "retrying" | "delivered" | "failed"
  readonly nextAttemptAt: string | null
}

/** A webhook an outcome event goes to. */
export interface EventTarget {
  readonly id: string
  readonly preset: ReplyWebhookPreset
}

const REDACTED = "[redacted]"

const WebhookRow = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  url: Schema.String,
  preset: Schema.Literals(["generic", "assistant", "chat"]),
  headers: Schema.Array(Schema.Struct({ name: Schema.String, value: Schema.String })),
  events: Schema.Array(Schema.Literals(["interaction.answered", "interaction.expired", "interaction.canceled"])),
  enabled: Schema.Boolean,
  isDefault: Schema.Boolean,
  createdAt: Schema.String,
  updatedAt: Schema.String
})

const toWebhook = (row: typeof WebhookRow.Type) =>
  new ReplyWebhook({ ...row, headers: row.headers.map((h) => ({ name: h.name, value: REDACTED })) }, { disableChecks: true })

const DeliveryRow = Schema.Struct({ ...ReplyWebhookDelivery.fields })

const DueRow = Schema.Struct({
  id: Schema.String,
  webhookId: Schema.String,
  payload: Schema.String,
  attempts: Schema.Int,
  url: Schema.String,
  headers: Schema.Array(Schema.Struct({ name: Schema.String, value: Schema.String })),
  signingSecret: Schema.String
})

const webhookColumns = "id, name, url, preset, headers, events, enabled, is_default, created_at, updated_at"
const deliveryColumns = `id, type, status, attempts, attempt_log, response_code, latency_ms, error, created_at,
  delivered_at, next_attempt_at`

export class WebhooksRepo extends Context.Service<WebhooksRepo, {
  readonly list: (userId: string) => Effect.Effect<ReadonlyArray<ReplyWebhook>>
  readonly find: (userId: string, id: string) => Effect.Effect<ReplyWebhook | undefined>
  readonly exists: (userId: string, id: string) => Effect.Effect<boolean>
  /** How many webhooks the account has, under the account's lock (in the caller's transaction, before its insert). */
  readonly lockAndCount: (userId: string) => Effect.Effect<number>
  readonly recentDeliveries: (webhookId: string, limit: number) => Effect.Effect<ReadonlyArray<ReplyWebhookDelivery>>
  readonly findDelivery: (id: string) => Effect.Effect<ReplyWebhookDelivery | undefined>
  /** Inserts; `isDefault` clears the flag on the account's other webhook in the same transaction. */
  readonly create: (row: WebhookFields & { readonly id: string; readonly userId: string; readonly signingSecret: string }) => Effect.Effect<ReplyWebhook>
  /** Changes the given fields; disabling cancels pending deliveries. None when not the account's. */
  readonly update: (userId: string, id: string, patch: Partial<WebhookFields>) => Effect.Effect<ReplyWebhook | undefined>
  /** Cancels pending deliveries and deletes; false when not the account's. */
  readonly remove: (userId: string, id: string) => Effect.Effect<boolean>
  readonly rotateSecret: (userId: string, id: string, secret: string) => Effect.Effect<ReplyWebhook | undefined>
  /** The enabled webhooks subscribed to `type` among the prompt's own, its service's default and the account default. */
  readonly targets: (routing: Routing, type: ReplyEventType) => Effect.Effect<ReadonlyArray<EventTarget>>
  /** Queues deliveries; one per (prompt, webhook): a repeat is ignored. */
  readonly insertDeliveries: (rows: ReadonlyArray<NewDelivery>) => Effect.Effect<void>
  /** Leases up to `limit` due deliveries for `leaseSeconds`. */
  readonly claimDue: (limit: number, leaseSeconds: number) => Effect.Effect<ReadonlyArray<DueDelivery>>
  /** Reads one delivery for a send outside the queue (a sample event). */
  readonly sendable: (id: string) => Effect.Effect<DueDelivery | undefined>
  /** Appends an attempt; a delivery canceled meanwhile stays canceled. */
  readonly recordAttempt: (id: string, attempt: AttemptRecord) => Effect.Effect<void>
  /** 410 Gone: the receiver asked to stop. */
  readonly disable: (webhookId: string) => Effect.Effect<void>
  /** The soonest due time of a queued delivery, if any. */
  readonly nextDue: Effect.Effect<string | undefined>
}>()("herald/WebhooksRepo") {
  static readonly layer = Layer.effect(WebhooksRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const decodeWebhooks = Schema.decodeUnknownEffect(Schema.Array(WebhookRow))
    const decodeDeliveries = Schema.decodeUnknownEffect(Schema.Array(DeliveryRow))
    const decodeDue = Schema.decodeUnknownEffect(Schema.Array(DueRow))

    const webhooks = <E, R>(query: Effect.Effect<ReadonlyArray<unknown>, E, R>) =>
      query.pipe(Effect.flatMap(decodeWebhooks), Effect.map((rows) => rows.map(toWebhook)), Effect.orDie)
    const deliveries = <E, R>(query: Effect.Effect<ReadonlyArray<unknown>, E, R>) =>
      query.pipe(
        Effect.flatMap(decodeDeliveries),
        Effect.map((rows) => rows.map((row) => new ReplyWebhookDelivery(row, { disableChecks: true }))),
        Effect.orDie
      )

    const clearOtherDefaults = (userId: string, id: string) =>
      sql`UPDATE reply_webhooks SET is_default = false, updated_at = now()
          WHERE user_id = ${userId} AND is_default AND id <> ${id}`

    const cancelPending = (webhookId: string) =>
      sql`UPDATE reply_webhook_deliveries SET status = 'canceled', next_attempt_at = NULL, leased_until = NULL
          WHERE webhook_id = ${webhookId} AND status IN ('pending', 'retrying')`

    const create: WebhooksRepo["Service"]["create"] = (row) =>
      sql.withTransaction(Effect.gen(function*() {
        if (row.isDefault) yield* clearOtherDefaults(row.userId, row.id)
        const created = yield* webhooks(sql`
          INSERT INTO reply_webhooks (id, user_id, name, url, preset, headers, events, enabled, is_default, signing_secret)
          VALUES (${row.id}, ${row.userId}, ${row.name}, ${row.url}, ${row.preset}, ${JSON.stringify(row.headers)}::jsonb,
                  ${[...row.events]}::text[], ${row.enabled}, ${row.isDefault}, ${row.signingSecret})
          RETURNING ${sql.literal(webhookColumns)}`)
        return created[0]!
      })).pipe(Effect.orDie)

    const update: WebhooksRepo["Service"]["update"] = (userId, id, patch) =>
      sql.withTransaction(Effect.gen(function*() {
        if (patch.isDefault === true) {
          // Under the account's lock (creates take it too), so two new defaults never meet at the unique
          // index; and only once the webhook is known to be the account's, so a wrong id changes nothing.
          yield* lockAccount(sql, LockSpace.replyWebhooks, userId)
          const owned = yield* sql`SELECT 1 FROM reply_webhooks WHERE id = ${id} AND user_id = ${userId} FOR UPDATE`
          if (owned.length === 0) return undefined
          yield* clearOtherDefaults(userId, id)
        }
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
        const rows = yield* webhooks(sql`
          UPDATE reply_webhooks SET ${sql.join(", ", false)(sets)}
          WHERE id = ${id} AND user_id = ${userId}
          RETURNING ${sql.literal(webhookColumns)}`)
        if (rows[0] !== undefined && patch.enabled === false) yield* cancelPending(id)
        return rows[0]
      })).pipe(Effect.orDie)

    const remove = (userId: string, id: string) =>
      sql.withTransaction(Effect.gen(function*() {
        const owned = yield* sql`SELECT 1 FROM reply_webhooks WHERE id = ${id} AND user_id = ${userId} FOR UPDATE`
        if (owned.length === 0) return false
        yield* cancelPending(id)
        yield* sql`DELETE FROM reply_webhooks WHERE id = ${id} AND user_id = ${userId}`
        return true
      })).pipe(Effect.orDie)

    const targets = (routing: Routing, type: ReplyEventType) =>
      sql<{ id: string; preset: ReplyWebhookPreset }>`
        SELECT DISTINCT w.id, w.preset FROM reply_webhooks w
        WHERE w.user_id = ${routing.userId} AND w.enabled AND ${type} = ANY(w.events)
          AND (w.is_default
            OR w.id = ${routing.webhookId}
            OR w.id = (SELECT s.default_reply_webhook_id FROM services s
                       WHERE s.id = ${routing.serviceId} AND s.user_id = ${routing.userId}))
        ORDER BY w.id`.pipe(Effect.orDie)

    const insertDeliveries = (rows: ReadonlyArray<NewDelivery>) =>
      !Arr.isReadonlyArrayNonEmpty(rows) ? Effect.void : sql`
        INSERT INTO reply_webhook_deliveries ${sql.insert(Arr.map(rows, (r) => ({ ...r })))}
        ON CONFLICT (interaction_id, webhook_id) DO NOTHING`.pipe(Effect.asVoid, Effect.orDie)

    const dueColumns = sql`d.id, d.webhook_id, d.payload, d.attempts, w.url, w.headers, w.signing_secret`

    const claimDue = (limit: number, leaseSeconds: number) =>
      sql`
        WITH due AS (
          SELECT d.id FROM reply_webhook_deliveries d
          WHERE d.status IN ('pending', 'retrying') AND d.next_attempt_at <= now()
            AND (d.leased_until IS NULL OR d.leased_until < now())
          ORDER BY d.next_attempt_at
          LIMIT ${limit}
          FOR UPDATE SKIP LOCKED),
        leased AS (
          UPDATE reply_webhook_deliveries d SET leased_until = now() + make_interval(secs => ${leaseSeconds})
          FROM due WHERE d.id = due.id
          RETURNING d.*)
        SELECT ${dueColumns} FROM leased d JOIN reply_webhooks w ON w.id = d.webhook_id`.pipe(
        Effect.flatMap(decodeDue),
        Effect.orDie
      )

    const sendable = (id: string) =>
      sql`SELECT ${dueColumns} FROM reply_webhook_deliveries d JOIN reply_webhooks w ON w.id = d.webhook_id
          WHERE d.id = ${id}`.pipe(Effect.flatMap(decodeDue), Effect.map((rows) => rows[0]), Effect.orDie)

    const recordAttempt = (id: string, { entry, nextAttemptAt, status }: AttemptRecord) =>
      sql`
        UPDATE reply_webhook_deliveries SET
          attempts = attempts + 1,
          attempt_log = attempt_log || ${JSON.stringify([entry])}::jsonb,
          status = ${status},
          response_code = ${entry.responseCode},
          latency_ms = ${entry.latencyMs},
          error = ${entry.error},
          next_attempt_at = ${nextAttemptAt},
          delivered_at = CASE WHEN ${status} = 'delivered' THEN now() ELSE delivered_at END,
          leased_until = NULL
        WHERE id = ${id} AND status <> 'canceled'`.pipe(Effect.asVoid, Effect.orDie)

    const disable = (webhookId: string) =>
      sql.withTransaction(
        sql`UPDATE reply_webhooks SET enabled = false, updated_at = now() WHERE id = ${webhookId}`.pipe(
          Effect.andThen(cancelPending(webhookId))
        )
      ).pipe(Effect.asVoid, Effect.orDie)

    const nextDue = sql<{ at: string | null }>`
      SELECT min(next_attempt_at) AS at FROM reply_webhook_deliveries WHERE status IN ('pending', 'retrying')`.pipe(
      Effect.map((rows) => rows[0]?.at ?? undefined),
      Effect.orDie
    )

    return WebhooksRepo.of({
      list: (userId) =>
        webhooks(sql`SELECT ${sql.literal(webhookColumns)} FROM reply_webhooks WHERE user_id = ${userId}
                     ORDER BY created_at DESC, id DESC`),
      find: (userId, id) =>
        webhooks(sql`SELECT ${sql.literal(webhookColumns)} FROM reply_webhooks WHERE id = ${id} AND user_id = ${userId}`)
          .pipe(Effect.map((rows) => rows[0])),
      exists: (userId, id) =>
        sql`SELECT 1 FROM reply_webhooks WHERE id = ${id} AND user_id = ${userId}`.pipe(
          Effect.map((rows) => rows.length > 0),
          Effect.orDie
        ),
      lockAndCount: (userId) =>
        lockAccount(sql, LockSpace.replyWebhooks, userId).pipe(
          Effect.andThen(sql<{ n: number }>`SELECT count(*)::int AS n FROM reply_webhooks WHERE user_id = ${userId}`),
          Effect.map((rows) => rows[0]?.n ?? 0),
          Effect.orDie
        ),
      recentDeliveries: (webhookId, limit) =>
        deliveries(sql`SELECT ${sql.literal(deliveryColumns)} FROM reply_webhook_deliveries WHERE webhook_id = ${webhookId}
                       ORDER BY created_at DESC, id DESC LIMIT ${limit}`),
      findDelivery: (id) =>
        deliveries(sql`SELECT ${sql.literal(deliveryColumns)} FROM reply_webhook_deliveries WHERE id = ${id}`)
          .pipe(Effect.map((rows) => rows[0])),
      create,
      update,
      remove,
      rotateSecret: (userId, id, secret) =>
        webhooks(sql`UPDATE reply_webhooks SET signing_secret = ${secret}, updated_at = now()
                     WHERE id = ${id} AND user_id = ${userId} RETURNING ${sql.literal(webhookColumns)}`)
          .pipe(Effect.map((rows) => rows[0])),
      targets,
      insertDeliveries,
      claimDue,
      sendable,
      recordAttempt,
      disable,
      nextDue
    })
  }))
}
