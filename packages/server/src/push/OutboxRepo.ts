/**
 * SQL of the durable push outbox: `push_receipts` (every push's history),
 * `push_queue` (the receipts pending or being sent: what to claim, when, and
 * who holds it; migrations/0015_push_queue.ts says why they are apart) and
 * `outbox_nodes` (each process's heartbeat). Claims commit `sending`
 * before any provider call and return what sending needs, decoded; answers are
 * recorded only on rows the recording node still holds. The rules (when to
 * claim, what an answer means, how long a silent node keeps its claims) live
 * in `Outbox.ts`.
 */
import { Context, Effect, Layer, Result as R, Schema } from "effect"
import { SqlClient } from "effect/sql"
import type { Statement } from "effect/sql"
import { makeJointWriter, write } from "../db/UnitOfWork.ts"
import type { NewPush } from "./Outbox.ts"
import { StoredPushMessage } from "./PushMessage.ts"

/** A receipt to queue as `pending`, due `grace` seconds after its commit. */
export interface ReceiptRow extends NewPush {
  readonly id: string
  readonly grace: number
}

/** A receipt claimed by a node, with its device as sending needs it. */
export const Claimed = Schema.Struct({
  id: Schema.String,
  deviceId: Schema.String,
  attempts: Schema.Number,
  // The push as the outbox wrote it (jsonb), decoded here so no sender casts it.
  message: StoredPushMessage,
  platform: Schema.Literals(["ios", "android", "web"]),
  pushToken: Schema.String,
  environment: Schema.NullOr(Schema.Literals(["sandbox", "production"])),
  active: Schema.Boolean,
  // A browser's Web Push keys (null for phones): its payload is encrypted to them.
  webPushP256dh: Schema.NullOr(Schema.String),
  webPushAuth: Schema.NullOr(Schema.String)
})
export type Claimed = typeof Claimed.Type

/** A claimed receipt whose row does not decode (its stored message, say): it cannot be sent. */
export interface Undecodable {
  readonly id: string
  /** What the decoding said. */
  readonly error: string
}

/** What one claim took: the rows to send, and apart those that do not decode, so one bad row stops no other. */
export interface Claim {
  readonly claimed: ReadonlyArray<Claimed>
  readonly undecodable: ReadonlyArray<Undecodable>
}

const decodeClaimed = Schema.decodeUnknownResult(Claimed)
const ClaimedId = Schema.Struct({ id: Schema.String })

/** Decodes each claimed row on its own. */
const sortClaim = (rows: ReadonlyArray<unknown>): Claim => {
  const claimed: Array<Claimed> = []
  const undecodable: Array<Undecodable> = []
  for (const row of rows) {
    const decoded = decodeClaimed(row)
    if (R.isSuccess(decoded)) claimed.push(decoded.success)
    // The id is the receipt's primary key, so it is always there to name.
    else undecodable.push({ id: Schema.decodeUnknownSync(ClaimedId)(row).id, error: decoded.failure.message })
  }
  return { claimed, undecodable }
}

/** A provider's answer to record. */
export interface Result {
  readonly id: string
  readonly status: "pending" | "accepted" | "error"
  readonly providerId: string | null
  readonly errorCode: string | null
  /** For `pending`: when to try again. */
  readonly nextAttemptAt: string | null
}

export class OutboxRepo extends Context.Service<OutboxRepo, {
  /** Queues receipts: in the caller's unit of work or transaction when there is one (db/UnitOfWork.ts), else now. */
  readonly insertReceipts: (rows: ReadonlyArray<ReceiptRow>) => Effect.Effect<void>
  /** Claims those of `ids` still pending whose device exists, for `node`. */
  readonly claimIds: (ids: ReadonlyArray<string>, node: string) => Effect.Effect<Claim>
  /** Claims up to `limit` due pending receipts whose device exists, oldest due first, for `node`. */
  readonly claimDue: (limit: number, node: string) => Effect.Effect<Claim>
  /** Records answers on the rows `node` still holds; a retry whose device is gone ends as `DeviceRemoved`. */
  readonly record: (results: ReadonlyArray<Result>, node: string) => Effect.Effect<void>
  /** Claims older than `staleSeconds` of nodes silent that long: an alert's becomes `unknown` (never sent again), a withdrawal's is sent again. */
  readonly expireStaleClaims: (staleSeconds: number) => Effect.Effect<void>
  /** Pending receipts of devices removed meanwhile end as `DeviceRemoved`. */
  readonly settleOrphans: Effect.Effect<void>
  /**
   * A device was removed: what it still had queued will never go (its receipts end as
   * `DeviceRemoved`, and stay as delivery history); a push being sent right now is left to its answer.
   */
  readonly settleRemovedDevice: (deviceId: string) => Effect.Effect<void>
  /** `node` is alive now; nodes silent for a day are forgotten. */
  readonly heartbeat: (node: string) => Effect.Effect<void>
}>()("herald/OutboxRepo") {
  static readonly layer = Layer.effect(OutboxRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    // Each row carries its grace: a unit of work may hold receipts of callers that send now and of others.
    // A receipt and its queue row are written by one statement (a joint writer): neither exists without the other.
    const receipts = makeJointWriter<ReceiptRow>(sql, (rows) => {
      // The history's rows without the messages, which only the queue keeps (migration 0017).
      const history = JSON.stringify(rows.map(({ message: _, ...row }) => row))
      return [
        sql`INSERT INTO push_receipts (id, user_id, device_id, origin, item_id, purpose, next_attempt_at)
            SELECT id, "userId", "deviceId", origin, "itemId", purpose, now() + make_interval(secs => grace)
            FROM jsonb_to_recordset(${history}::jsonb)
              AS r(id text, "userId" text, "deviceId" text, origin text, "itemId" text, purpose text, grace float8)`,
        sql`INSERT INTO push_queue (receipt_id, device_id, due_at, message)
            SELECT id, "deviceId", now() + make_interval(secs => grace), message
            FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
              AS r(id text, "deviceId" text, grace float8, message jsonb)`
      ]
    })

    const claimColumns = sql`
      r.id, r.device_id, r.attempts, held.message, d.platform, d.push_token,
      d.live_activity_token_environment AS environment, d.active, d.web_push_p256dh, d.web_push_auth`

    /**
     * Claims the queue rows `picked` locked: their receipts become `sending`
     * (a HOT update: no index reads the columns it sets) and the queue rows
     * record the claim. A picked row whose receipt is no longer pending (a
     * withdrawal or a removal got there first) leaves the queue.
     */
    const claim = (picked: Statement.Fragment, node: string) => sql`
      WITH c AS (${picked}),
      r AS (
        UPDATE push_receipts r SET status = 'sending', claimed_at = now(), claimed_by = ${node}, attempts = r.attempts + 1
        FROM c WHERE r.id = c.receipt_id AND r.status = 'pending'
        RETURNING r.id, r.device_id, r.attempts),
      held AS (
        UPDATE push_queue q SET claimed_by = ${node}, claimed_at = now() FROM r WHERE q.receipt_id = r.id
        RETURNING q.receipt_id, q.message),
      gone AS (
        DELETE FROM push_queue q USING c
        WHERE q.receipt_id = c.receipt_id AND NOT EXISTS (SELECT 1 FROM r WHERE r.id = c.receipt_id))
      SELECT ${claimColumns} FROM r JOIN held ON held.receipt_id = r.id JOIN devices d ON d.id = r.device_id`

    // A queue row whose device is gone is left for `settleOrphans`. The check is a scalar
    // subquery, which the planner keeps as a filter of each row: as a join, devices could
    // drive the plan, and did on a seeded soak — with statistics taken while the queue was
    // nearly empty, each claim walked every row the queue held per device through
    // push_queue_device_idx (19,000 heap pages for 60 ids, 5,000 buffers a call on average,
    // the rate down by a third in ten minutes). Read alone, the queue has one plan for a
    // list of ids (its primary key) and one for what is due (its due index).
    const deviceExists = sql`(SELECT true FROM devices d WHERE d.id = q.device_id)`

    // Rows are decoded one by one (`sortClaim`), not by `SqlSchema`: a row that does not decode is
    // already claimed, and must be settled, not fail the claim of the rest (and every claim after it).
    const claimIds = ({ ids, node }: { readonly ids: ReadonlyArray<string>; readonly node: string }) =>
      claim(
        sql`SELECT q.receipt_id FROM push_queue q
            WHERE q.receipt_id = ANY(${ids}::text[]) AND q.claimed_by IS NULL AND ${deviceExists}
            FOR UPDATE OF q SKIP LOCKED`,
        node
      ).pipe(Effect.map(sortClaim))

    const claimDue = ({ limit, node }: { readonly limit: number; readonly node: string }) =>
      claim(
        sql`SELECT q.receipt_id FROM push_queue q
            WHERE q.claimed_by IS NULL AND q.due_at <= now() AND ${deviceExists}
            ORDER BY q.due_at LIMIT ${limit}
            FOR UPDATE OF q SKIP LOCKED`,
        node
      ).pipe(Effect.map(sortClaim))

    // A push to retry whose device was removed while it was at the provider will never go:
    // it ends as the removal would have ended it. An answer ends the queue row, a retry
    // puts it back, due when the backoff says.
    const record = (results: ReadonlyArray<Result>, node: string) =>
      results.length === 0 ? Effect.void : sql`
        WITH u AS (
          UPDATE push_receipts AS r SET
            status = CASE WHEN v.status = 'pending' AND NOT EXISTS (SELECT 1 FROM devices d WHERE d.id = r.device_id)
                     THEN 'error' ELSE v.status END,
            error_code = CASE WHEN v.status = 'pending' AND NOT EXISTS (SELECT 1 FROM devices d WHERE d.id = r.device_id)
                         THEN 'DeviceRemoved' ELSE v."errorCode" END,
            provider_id = v."providerId",
            checked_at = now(), claimed_at = NULL, claimed_by = NULL,
            next_attempt_at = COALESCE(v."nextAttemptAt", r.next_attempt_at)
          FROM jsonb_to_recordset(${JSON.stringify(results)}::jsonb)
            AS v(id text, status text, "providerId" text, "errorCode" text, "nextAttemptAt" timestamptz)
          WHERE r.id = v.id AND r.id = ANY(${results.map((r) => r.id)}::text[])
            AND r.status = 'sending' AND r.claimed_by = ${node}
          RETURNING r.id, r.status, r.next_attempt_at),
        done AS (
          DELETE FROM push_queue q USING u WHERE q.receipt_id = u.id AND u.status <> 'pending')
        UPDATE push_queue q SET claimed_by = NULL, claimed_at = NULL, due_at = u.next_attempt_at
        FROM u WHERE q.receipt_id = u.id AND u.status = 'pending'`.pipe(Effect.asVoid, Effect.orDie)

    // A dead node's claim may have reached its provider. An alert seen twice is the harm, so it
    // ends `unknown` and is never sent again; a withdrawal removes what may already be gone, so it
    // is sent again (else the expired prompt's alert stays on the lock screen). Claims live in the
    // queue: finding the stale ones reads the history only for their own receipts.
    const expireStaleClaims = (staleSeconds: number) => sql`
      WITH s AS (
        SELECT q.receipt_id, r.purpose = 'withdraw' AS resend
        FROM push_queue q JOIN push_receipts r ON r.id = q.receipt_id
        WHERE q.claimed_by IS NOT NULL AND q.claimed_at < now() - make_interval(secs => ${staleSeconds})
          AND q.claimed_by NOT IN (
            SELECT node FROM outbox_nodes WHERE seen_at > now() - make_interval(secs => ${staleSeconds}))
        FOR UPDATE OF q SKIP LOCKED),
      dropped AS (
        DELETE FROM push_queue q USING s WHERE q.receipt_id = s.receipt_id AND NOT s.resend
        RETURNING q.receipt_id),
      released AS (
        UPDATE push_queue q SET claimed_by = NULL, claimed_at = NULL, due_at = now()
        FROM s WHERE q.receipt_id = s.receipt_id AND s.resend
        RETURNING q.receipt_id),
      again AS (
        UPDATE push_receipts r SET status = 'pending', claimed_at = NULL, claimed_by = NULL
        FROM released WHERE r.id = released.receipt_id AND r.status = 'sending')
      UPDATE push_receipts r SET status = 'unknown', checked_at = now(), claimed_at = NULL
      FROM dropped WHERE r.id = dropped.receipt_id AND r.status = 'sending'`.pipe(
      Effect.asVoid,
      Effect.orDie
    )

    const settleOrphans = sql`
      WITH o AS (
        DELETE FROM push_queue q
        WHERE q.claimed_by IS NULL AND NOT EXISTS (SELECT 1 FROM devices d WHERE d.id = q.device_id)
        RETURNING receipt_id)
      UPDATE push_receipts r SET status = 'error', error_code = 'DeviceRemoved', checked_at = now()
      FROM o WHERE r.id = o.receipt_id AND r.status = 'pending'`.pipe(
      Effect.asVoid,
      Effect.orDie
    )

    const settleRemovedDevice = (deviceId: string) =>
      sql`WITH dequeued AS (
            DELETE FROM push_queue WHERE device_id = ${deviceId} AND claimed_by IS NULL RETURNING receipt_id)
          UPDATE push_receipts SET status = 'error', error_code = 'DeviceRemoved', checked_at = now()
          WHERE id IN (SELECT receipt_id FROM dequeued) AND status = 'pending'`.pipe(Effect.asVoid, Effect.orDie)

    const heartbeat = (node: string) =>
      sql`INSERT INTO outbox_nodes (node) VALUES (${node}) ON CONFLICT (node) DO UPDATE SET seen_at = now()`.pipe(
        Effect.andThen(sql`DELETE FROM outbox_nodes WHERE seen_at < now() - interval '1 day'`),
        Effect.asVoid,
        Effect.orDie
      )

    return OutboxRepo.of({
      insertReceipts: (rows) => write(receipts, rows),
      claimIds: (ids, node) => claimIds({ ids, node }).pipe(Effect.orDie),
      // What is due is read in due order and the reading stops at `limit`: only an index scan
      // does that. The planner would rather take a bitmap scan of the due index (and sort), which
      // visits every entry the index holds — dead rows of deleted queue rows included, which only
      // the next VACUUM removes and a bitmap scan never marks — 24,000 pages a call on the seeded
      // soak. An index scan also marks the dead entries it passes, so the next claim skips them.
      claimDue: (limit, node) =>
        sql.withTransaction(
          sql`SET LOCAL enable_bitmapscan = off`.pipe(
            Effect.andThen(sql`SET LOCAL enable_seqscan = off`),
            Effect.andThen(claimDue({ limit, node }))
          )
        ).pipe(Effect.orDie),
      record,
      expireStaleClaims,
      settleOrphans,
      settleRemovedDevice,
      heartbeat
    })
  }))
}
