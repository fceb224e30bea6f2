/**
 * SQL of each device's ordered queue of live-activity operations: queuing
 * updates (one shared statement for concurrent ones), reading each device's
 * next operation, claiming it (committed `sending` before its provider call,
 * so it is never sent twice), settling it, backing it off, and giving up the
 * claims of processes that died mid-send. Every row read is decoded with
 * Schema.
 */
import { Array as Arr, Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { batched } from "../db/Batching.ts"
import type { PushMessage } from "../push/PushMessage.ts"
import { StoredPushMessage } from "../push/PushMessage.ts"
import { QueuedOperation, QueuedUpdateRow } from "./Rows.ts"
import type { QueuedUpdate, UpdateWrite } from "./Rows.ts"
import { enqueueStatement } from "./UpdateStatement.ts"

const decodeQueued = Schema.decodeUnknownEffect(Schema.Array(QueuedUpdateRow))
const decodeOperations = Schema.decodeUnknownEffect(Schema.Array(QueuedOperation))
const decodeClaimed = Schema.decodeUnknownEffect(Schema.Array(Schema.Struct({ id: Schema.String, payload: StoredPushMessage })))
const decodeActivityIds = Schema.decodeUnknownEffect(Schema.Array(Schema.Struct({ activityId: Schema.String })))
const decodeIds = Schema.decodeUnknownEffect(Schema.Array(Schema.Struct({ id: Schema.String })))

export class QueueRepo extends Context.Service<QueueRepo, {
  /**
   * Queues an update for every device showing (or about to show) the
   * activity. A routine one takes the place of the device's unsent routine
   * snapshot when that is the newest thing it has queued; any update
   * supersedes the unsent routine ones queued after the device's last
   * milestone, start or end (those are barriers).
   * None when the activity moved past `expectedSequence` or ended. One
   * statement; concurrent activities' updates share it.
   */
  readonly enqueueUpdate: (write: UpdateWrite) => Effect.Effect<QueuedUpdate | undefined>
  /** Each device's next operation (lowest sequence not yet done). */
  readonly nextOperations: (activityId: string) => Effect.Effect<ReadonlyArray<QueuedOperation>>
  /**
   * Claims a queued operation for sending, in this process's name (`node`):
   * answers its payload as claimed (a newer snapshot may have taken the row's
   * place since it was read), or undefined when another sender has it.
   */
  readonly claim: (op: QueuedOperation, node: string) => Effect.Effect<PushMessage | undefined>
  /**
   * Operations claimed longer than `staleSeconds` ago by a node that has not
   * heartbeated since become `unknown` (never sent again), so their devices'
   * queues move on; answers their activities.
   */
  readonly releaseDeadClaims: (staleSeconds: number) => Effect.Effect<ReadonlyArray<string>>
  readonly recordAccepted: (op: QueuedOperation) => Effect.Effect<void>
  /**
   * A failure for good. A failed start, or `deviceGone` (the provider refused
   * the token), fails the device's target: its place is freed and what it
   * still has queued is dropped.
   */
  readonly recordFailed: (op: QueuedOperation, reason: string, deviceGone: boolean) => Effect.Effect<void>
  /** Back to the queue, due after `delayMillis` (a transient provider failure). */
  readonly requeue: (op: QueuedOperation, reason: string, delayMillis: number) => Effect.Effect<void>
  /** Paced starts: each falls due at its device's next start slot (epoch ms). */
  readonly deferStarts: (starts: ReadonlyArray<{ readonly id: string; readonly at: number }>) => Effect.Effect<void>
  /** Activities with operations due for at least `graceMillis` (left by a restart, or by an actor that stopped tending them). */
  readonly withQueuedWork: (graceMillis: number) => Effect.Effect<ReadonlyArray<string>>
}>()("herald/QueueRepo") {
  static readonly layer = Layer.effect(QueueRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const enqueueUpdates = batched((writes: Arr.NonEmptyReadonlyArray<UpdateWrite>) =>
      enqueueStatement(sql, writes).pipe(
        Effect.flatMap(decodeQueued),
        Effect.map((rows) => {
          const byId = new Map(rows.map((r) => [r.id, r]))
          return writes.map((w): QueuedUpdate | undefined => {
            const r = byId.get(w.activityId)
            return r === undefined
              ? undefined
              : { sequence: r.sequence, superseded: r.superseded, deviceIds: r.deviceIds, operationIds: r.operationIds }
          })
        }),
        Effect.orDie
      ))

    const nextOperations = (activityId: string) =>
      sql`
        SELECT DISTINCT ON (o.device_id) o.id, o.activity_id, o.device_id, o.seq, o.op, o.priority, o.priority_reason, o.status,
          o.payload, o.attempts, o.next_attempt_at <= now() AS due,
          GREATEST(0, ceil(EXTRACT(EPOCH FROM o.next_attempt_at - now()) * 1000))::int AS due_in_millis,
          (count(*) OVER (PARTITION BY o.device_id))::int AS behind,
          d.platform, d.push_token, d.push_to_start_token,
          t.update_token, d.live_activity_token_environment AS environment, d.active AS device_active,
          d.web_push_p256dh, d.web_push_auth
        FROM live_activity_operations o
        JOIN devices d ON d.id = o.device_id
        JOIN live_activity_targets t ON t.activity_id = o.activity_id AND t.device_id = o.device_id
        WHERE o.activity_id = ${activityId} AND o.status IN ('queued', 'sending')
        ORDER BY o.device_id, o.seq`.pipe(Effect.flatMap(decodeOperations), Effect.orDie)

    // Concurrent activities' claims share one statement; each id is claimed once. Their activities
    // bound every way to the rows (by primary key, or the queue's index by activity), whatever the
    // planner's statistics say of the queue's size.
    const claimBatch = batched((claims: Arr.NonEmptyReadonlyArray<{ readonly id: string; readonly activityId: string; readonly node: string }>) =>
      sql`
        UPDATE live_activity_operations o SET status = 'sending', attempts = o.attempts + 1, claimed_by = v.node, claimed_at = now()
        FROM jsonb_to_recordset(${JSON.stringify(claims.map((c) => ({ id: c.id, node: c.node })))}::jsonb) AS v(id text, node text)
        WHERE o.id = v.id AND o.id = ANY(${claims.map((c) => c.id)}::text[])
          AND o.activity_id = ANY(${[...new Set(claims.map((c) => c.activityId))]}::text[]) AND o.status = 'queued'
        RETURNING o.id, o.payload`.pipe(
        Effect.flatMap(decodeClaimed),
        Effect.map((rows) => {
          const claimed = new Map(rows.map((r) => [r.id, r.payload]))
          return claims.map((c) => {
            const payload = claimed.get(c.id)
            claimed.delete(c.id)
            return payload
          })
        }),
        Effect.orDie
      )
    )
    const claim = (op: QueuedOperation, node: string) => claimBatch({ id: op.id, activityId: op.activityId, node })

    // A start of unknown fate may have put the card on the phone: its device is
    // taken as showing it (updates and the end go to it; a phone without the
    // card ignores them), so the activity leaves `starting`.
    const releaseDeadClaims = (staleSeconds: number) =>
      sql`
        WITH dead AS (
          -- Rows an end holds are skipped (the next sweep takes them), so the sweep never waits in a cycle.
          SELECT id FROM live_activity_operations
          WHERE status = 'sending' AND claimed_at < now() - make_interval(secs => ${staleSeconds})
            AND (claimed_by IS NULL OR claimed_by NOT IN (
              SELECT node FROM outbox_nodes WHERE seen_at > now() - make_interval(secs => ${staleSeconds})))
          ORDER BY id FOR UPDATE SKIP LOCKED),
        released AS (
          UPDATE live_activity_operations SET status = 'unknown', sent_at = now()
          WHERE id IN (SELECT id FROM dead)
          RETURNING activity_id, device_id, op),
        shown AS (
          UPDATE live_activity_targets t SET status = 'active' FROM released r
          WHERE r.op = 'start' AND t.activity_id = r.activity_id AND t.device_id = r.device_id AND t.status = 'queued')
        SELECT DISTINCT activity_id FROM released`.pipe(
        Effect.flatMap(decodeActivityIds),
        Effect.map((rows) => rows.map((r) => r.activityId)),
        Effect.tap((ids) => Effect.forEach(ids, refreshStatus, { discard: true })),
        Effect.orDie
      )

    /** The activity's status from its devices: any showing it → active (partial when some failed). */
    const refreshStatus = (activityId: string) =>
      sql`
        UPDATE live_activities a SET updated_at = now(), status = CASE
          WHEN s.active > 0 AND s.failed > 0 THEN 'partial'
          WHEN s.active > 0 THEN 'active'
          WHEN s.failed > 0 AND s.queued = 0 THEN 'failed'
          ELSE a.status END
        FROM (SELECT count(*) FILTER (WHERE status = 'active') AS active,
                     count(*) FILTER (WHERE status = 'failed') AS failed,
                     count(*) FILTER (WHERE status = 'queued') AS queued
              FROM live_activity_targets WHERE activity_id = ${activityId}) s
        WHERE a.id = ${activityId} AND a.status NOT IN ('ended', 'expired')`

    // Updates and ends only change their own row: concurrent ones share one statement.
    const settleRows = batched((rows: Arr.NonEmptyReadonlyArray<{ readonly id: string; readonly activityId: string; readonly status: string; readonly reason: string | null }>) =>
      // The ids and their activities let the planner find the rows by key, or by the queue's index by
      // activity (it cannot size the record set), whatever its statistics say of the queue.
      sql`
        UPDATE live_activity_operations o SET status = v.status, error_code = v.reason, sent_at = now()
        FROM jsonb_to_recordset(${JSON.stringify(rows.map((r) => ({ id: r.id, status: r.status, reason: r.reason })))}::jsonb) AS v(id text, status text, reason text)
        WHERE o.id = v.id AND o.id = ANY(${rows.map((r) => r.id)}::text[])
          AND o.activity_id = ANY(${[...new Set(rows.map((r) => r.activityId))]}::text[])`.pipe(Effect.as(rows.map(() => undefined)), Effect.orDie)
    )

    const settle = (op: QueuedOperation, status: "accepted" | "failed", reason: string | null, deviceGone = false) =>
      op.op !== "start" && !deviceGone ? settleRows({ id: op.id, activityId: op.activityId, status, reason }) : sql.withTransaction(Effect.gen(function*() {
        // The activity's row first, as an end takes it, so the two cannot deadlock.
        const rows = yield* decodeIds(yield* sql`
          SELECT a.id FROM live_activities a JOIN live_activity_operations o ON o.activity_id = a.id
          WHERE o.id = ${op.id} FOR UPDATE OF a`)
        const activityId = rows[0]?.id
        if (activityId === undefined) return
        yield* sql`UPDATE live_activity_operations SET status = ${status}, error_code = ${reason}, sent_at = now() WHERE id = ${op.id}`
        if (status === "accepted") {
          yield* sql`UPDATE live_activity_targets SET status = 'active'
                     WHERE activity_id = ${activityId} AND device_id = ${op.deviceId} AND status = 'queued'`
        } else {
          // The device will not show the card: its place is freed and nothing more goes to it.
          yield* sql`UPDATE live_activity_targets SET status = 'failed'
                     WHERE activity_id = ${activityId} AND device_id = ${op.deviceId} AND status IN ('queued', 'active')`
          yield* sql`UPDATE live_activity_operations SET status = 'superseded', error_code = 'device_failed'
                     WHERE activity_id = ${activityId} AND device_id = ${op.deviceId} AND status = 'queued'`
        }
        yield* refreshStatus(activityId)
      })).pipe(Effect.orDie)

    const requeue = (op: QueuedOperation, reason: string, delayMillis: number) =>
      sql`UPDATE live_activity_operations SET status = 'queued', error_code = ${reason},
            next_attempt_at = now() + make_interval(secs => ${delayMillis / 1000})
          WHERE id = ${op.id}`.pipe(Effect.asVoid, Effect.orDie)

    const deferStarts = (starts: ReadonlyArray<{ readonly id: string; readonly at: number }>) =>
      sql`UPDATE live_activity_operations o SET next_attempt_at = to_timestamp(v.at / 1000.0)
          FROM jsonb_to_recordset(${JSON.stringify(starts)}::jsonb) AS v(id text, at bigint)
          WHERE o.id = v.id AND o.id = ANY(${starts.map((s) => s.id)}::text[]) AND o.status = 'queued'
            AND o.next_attempt_at IS DISTINCT FROM to_timestamp(v.at / 1000.0)`.pipe(Effect.asVoid, Effect.orDie)

    const withQueuedWork = (graceMillis: number) => sql`
      SELECT DISTINCT o.activity_id FROM live_activity_operations o
      JOIN devices d ON d.id = o.device_id
      JOIN live_activity_targets t ON t.activity_id = o.activity_id AND t.device_id = o.device_id
      WHERE o.status = 'queued' AND o.next_attempt_at <= now() - make_interval(secs => ${graceMillis / 1000})
        AND (o.op = 'start' OR d.platform <> 'ios' OR t.update_token IS NOT NULL)
      LIMIT 1000`.pipe(
      Effect.flatMap(decodeActivityIds),
      Effect.map((rows) => rows.map((r) => r.activityId)),
      Effect.orDie
    )

    return QueueRepo.of({
      enqueueUpdate: enqueueUpdates,
      nextOperations,
      claim,
      releaseDeadClaims,
      recordAccepted: (op) => settle(op, "accepted", null),
      recordFailed: (op, reason, deviceGone) => settle(op, "failed", reason, deviceGone),
      requeue,
      deferStarts,
      withQueuedWork
    })
  }))
}
