/**
 * SQL of reply-webhook deliveries: a durable queue with an attempt log.
 * A worker leases due rows (`FOR UPDATE SKIP LOCKED`) and marks the attempt
 * begun in the same committed statement, before its request leaves; the
 * outcome completes it. An attempt still open when its lease lapses was cut
 * short (the node died mid-send): it is closed as interrupted, and the row
 * is sent again with the same id (at-least-once). Rows are decoded with the
 * contract's `ReplyWebhookDelivery`.
 */
import { ReplyWebhookDelivery } from "@herald/api"
import type { ReplyEventType, ReplyWebhookAttempt } from "@herald/api"
import { Array as Arr, Context, Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"

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
export const DueDelivery = Schema.Struct({
  id: Schema.String,
  webhookId: Schema.String,
  payload: Schema.String,
  attempts: Schema.Int,
  url: Schema.String,
  headers: Schema.Array(Schema.Struct({ name: Schema.String, value: Schema.String })),
  signingSecret: Schema.String
})
export type DueDelivery = typeof DueDelivery.Type

/** An attempt begun by a node that never completed it (its lease lapsed). */
export const OpenAttempt = Schema.Struct({
  id: Schema.String,
  attempts: Schema.Int,
  startedAt: Schema.String,
  /** A queued delivery retries; a sample event or a canceled delivery does not. */
  queued: Schema.Boolean
})
export type OpenAttempt = typeof OpenAttempt.Type

export interface AttemptRecord {
  readonly entry: ReplyWebhookAttempt
  readonly status: "retrying" | "delivered" | "failed"
  readonly nextAttemptAt: string | null
}

/** Cancels a webhook's pending deliveries (in the caller's transaction); an attempt in flight keeps its lease. */
export const cancelPending = (sql: SqlClient.SqlClient, webhookId: string) =>
  sql`UPDATE reply_webhook_deliveries SET status = 'canceled', next_attempt_at = NULL
      WHERE webhook_id = ${webhookId} AND status IN ('pending', 'retrying')`

const Leasing = Schema.Struct({ limit: Schema.Int, leaseSeconds: Schema.Int })

const deliveryColumns = `id, type, status, attempts, attempt_log, response_code, latency_ms, error, created_at,
  delivered_at, next_attempt_at`

export class DeliveriesRepo extends Context.Service<DeliveriesRepo, {
  readonly recent: (webhookId: string, limit: number) => Effect.Effect<ReadonlyArray<ReplyWebhookDelivery>>
  readonly find: (id: string) => Effect.Effect<ReplyWebhookDelivery | undefined>
  /** Queues deliveries; one per (prompt, webhook): a repeat is ignored. */
  readonly insert: (rows: ReadonlyArray<NewDelivery>) => Effect.Effect<void>
  /** Leases up to `limit` due deliveries for `leaseSeconds` and begins an attempt on each (committed). */
  readonly claimDue: (limit: number, leaseSeconds: number) => Effect.Effect<ReadonlyArray<DueDelivery>>
  /** Begins an attempt on one delivery outside the queue (a sample event); none when missing or already open. */
  readonly start: (id: string, leaseSeconds: number) => Effect.Effect<DueDelivery | undefined>
  /** Leases up to `limit` attempts left open past their lease, for closing as interrupted. */
  readonly claimInterrupted: (limit: number, leaseSeconds: number) => Effect.Effect<ReadonlyArray<OpenAttempt>>
  /**
   * Completes the open attempt numbered `entry.attempt`: appends it to the log
   * and ends the lease. Nothing when that attempt was already completed (by
   * its node or as interrupted). A delivery canceled meanwhile stays canceled,
   * its attempt logged.
   */
  readonly recordAttempt: (id: string, attempt: AttemptRecord) => Effect.Effect<void>
}>()("herald/DeliveriesRepo") {
  static readonly layer = Layer.effect(DeliveriesRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = sql.literal(deliveryColumns)
    const dueColumns = sql`d.id, d.webhook_id, d.payload, d.attempts, w.url, w.headers, w.signing_secret`

    const recent = SqlSchema.findAll({
      Request: Schema.Struct({ webhookId: Schema.String, limit: Schema.Int }),
      Result: ReplyWebhookDelivery,
      execute: ({ limit, webhookId }) =>
        sql`SELECT ${columns} FROM reply_webhook_deliveries WHERE webhook_id = ${webhookId}
            ORDER BY created_at DESC, id DESC LIMIT ${limit}`
    })

    const find = SqlSchema.findAll({
      Request: Schema.String,
      Result: ReplyWebhookDelivery,
      execute: (id) => sql`SELECT ${columns} FROM reply_webhook_deliveries WHERE id = ${id}`
    })

    const insert = (rows: ReadonlyArray<NewDelivery>) =>
      !Arr.isReadonlyArrayNonEmpty(rows) ? Effect.void : sql`
        INSERT INTO reply_webhook_deliveries ${sql.insert(Arr.map(rows, (r) => ({ ...r })))}
        ON CONFLICT (interaction_id, webhook_id) DO NOTHING`.pipe(Effect.asVoid, Effect.orDie)

    const claimDue = SqlSchema.findAll({
      Request: Leasing,
      Result: DueDelivery,
      execute: ({ leaseSeconds, limit }) => sql`
        WITH due AS (
          SELECT d.id FROM reply_webhook_deliveries d
          WHERE d.status IN ('pending', 'retrying') AND d.next_attempt_at <= now()
            AND d.attempt_started_at IS NULL AND (d.leased_until IS NULL OR d.leased_until < now())
          ORDER BY d.next_attempt_at
          LIMIT ${limit}
          FOR UPDATE SKIP LOCKED),
        leased AS (
          UPDATE reply_webhook_deliveries d
          SET leased_until = now() + make_interval(secs => ${leaseSeconds}), attempt_started_at = now()
          FROM due WHERE d.id = due.id
          RETURNING d.*)
        SELECT ${dueColumns} FROM leased d JOIN reply_webhooks w ON w.id = d.webhook_id`
    })

    const start = SqlSchema.findAll({
      Request: Schema.Struct({ id: Schema.String, leaseSeconds: Schema.Int }),
      Result: DueDelivery,
      execute: ({ id, leaseSeconds }) => sql`
        UPDATE reply_webhook_deliveries d
        SET leased_until = now() + make_interval(secs => ${leaseSeconds}), attempt_started_at = now()
        FROM reply_webhooks w
        WHERE d.id = ${id} AND w.id = d.webhook_id AND d.attempt_started_at IS NULL
        RETURNING ${dueColumns}`
    })

    const claimInterrupted = SqlSchema.findAll({
      Request: Leasing,
      Result: OpenAttempt,
      execute: ({ leaseSeconds, limit }) => sql`
        WITH cut AS (
          SELECT id FROM reply_webhook_deliveries
          WHERE attempt_started_at IS NOT NULL AND leased_until < now()
          ORDER BY leased_until
          LIMIT ${limit}
          FOR UPDATE SKIP LOCKED)
        UPDATE reply_webhook_deliveries d SET leased_until = now() + make_interval(secs => ${leaseSeconds})
        FROM cut WHERE d.id = cut.id
        RETURNING d.id, d.attempts, d.attempt_started_at AS started_at,
          d.status <> 'canceled' AND d.next_attempt_at IS NOT NULL AS queued`
    })

    const recordAttempt = (id: string, { entry, nextAttemptAt, status }: AttemptRecord) =>
      sql`
        UPDATE reply_webhook_deliveries SET
          attempts = attempts + 1,
          attempt_log = attempt_log || ${JSON.stringify([entry])}::jsonb,
          status = CASE WHEN status = 'canceled' THEN status ELSE ${status} END,
          response_code = ${entry.responseCode},
          latency_ms = ${entry.latencyMs},
          error = ${entry.error},
          next_attempt_at = CASE WHEN status = 'canceled' THEN NULL ELSE ${nextAttemptAt}::timestamptz END,
          delivered_at = CASE WHEN ${status} = 'delivered' AND status <> 'canceled' THEN now() ELSE delivered_at END,
          leased_until = NULL,
          attempt_started_at = NULL
        WHERE id = ${id} AND attempts = ${entry.attempt - 1} AND attempt_started_at IS NOT NULL`.pipe(Effect.asVoid, Effect.orDie)

    return DeliveriesRepo.of({
      recent: (webhookId, limit) => recent({ webhookId, limit }).pipe(Effect.orDie),
      find: (id) => find(id).pipe(Effect.map((rows) => rows[0]), Effect.orDie),
      insert,
      claimDue: (limit, leaseSeconds) => claimDue({ limit, leaseSeconds }).pipe(Effect.orDie),
      start: (id, leaseSeconds) => start({ id, leaseSeconds }).pipe(Effect.map((rows) => rows[0]), Effect.orDie),
      claimInterrupted: (limit, leaseSeconds) => claimInterrupted({ limit, leaseSeconds }).pipe(Effect.orDie),
      recordAttempt
    })
  }))
}
