/**
 * SQL of live activities: the logical activity, its place on each target
 * device (at most five concurrent per device), and each device's ordered
 * queue of operations. Capacity is checked with the target devices' rows
 * locked, so concurrent starts to one device cannot overfill it.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import type { PushMessage } from "../push/PushMessage.ts"

/** spec Limits: concurrent live activities per device, interactive prompt cards included. */
export const DEVICE_CAPACITY = 5

export interface NewCard {
  readonly id: string
  readonly userId: string
  readonly tokenId: string
  readonly interactionId: string
  readonly props: Readonly<Record<string, unknown>>
  readonly expiresAt: string
}

/** A queued operation with what sending it needs. */
export interface QueuedOperation {
  readonly id: string
  readonly deviceId: string
  readonly seq: number
  readonly op: "start" | "update" | "end"
  readonly priority: 5 | 10
  readonly payload: PushMessage
  readonly attempts: number
  readonly platform: "ios" | "android"
  readonly pushToken: string
  readonly pushToStartToken: string | null
  readonly updateToken: string | null
  readonly environment: "sandbox" | "production" | null
}

export class ActivitiesRepo extends Context.Service<ActivitiesRepo, {
  /**
   * Starts a card on the devices with room, with each device's `start`
   * operation queued (in the caller's transaction). Answers the devices used,
   * or none when every device is full.
   */
  readonly startCard: (
    card: NewCard,
    deviceIds: ReadonlyArray<string>,
    startMessage: (deviceId: string) => PushMessage
  ) => Effect.Effect<ReadonlyArray<string> | undefined>
  /** Ends the logical activity at once: frees the devices and queues each device's `end`. */
  readonly endForInteraction: (interactionId: string, endMessage: (activityId: string) => PushMessage) => Effect.Effect<string | undefined>
  /** Claims the next due operation of each device of the activity, in sequence order. */
  readonly claimNext: (activityId: string) => Effect.Effect<ReadonlyArray<QueuedOperation>>
  readonly recordAccepted: (op: QueuedOperation) => Effect.Effect<void>
  readonly recordFailed: (op: QueuedOperation, reason: string) => Effect.Effect<void>
  /** Back to the queue, due after `delayMillis` (a transient provider failure). */
  readonly requeue: (op: QueuedOperation, reason: string, delayMillis: number) => Effect.Effect<void>
  /** Activities with operations due now (after a restart, or a retry's backoff). */
  readonly withQueuedWork: Effect.Effect<ReadonlyArray<string>>
}>()("herald/ActivitiesRepo") {
  static readonly layer = Layer.effect(ActivitiesRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const startCard: ActivitiesRepo["Service"]["startCard"] = (card, deviceIds, startMessage) =>
      Effect.gen(function*() {
        // Locked in id order: concurrent starts to the same devices queue here.
        yield* sql`SELECT id FROM devices WHERE id = ANY(${[...deviceIds]}::text[]) ORDER BY id FOR UPDATE`
        const counts = yield* sql<{ deviceId: string; n: number }>`
          SELECT t.device_id, count(*)::int AS n FROM live_activity_targets t
          WHERE t.device_id = ANY(${[...deviceIds]}::text[]) AND t.status IN ('queued', 'active')
          GROUP BY t.device_id`
        const used = new Map(counts.map((c) => [c.deviceId, c.n]))
        const room = deviceIds.filter((id) => (used.get(id) ?? 0) < DEVICE_CAPACITY)
        if (room.length === 0) return undefined
        yield* sql`
          INSERT INTO live_activities (id, user_id, token_id, interaction_id, props, status, sequence, expires_at)
          VALUES (${card.id}, ${card.userId}, ${card.tokenId}, ${card.interactionId}, ${JSON.stringify(card.props)}::jsonb,
                  'starting', 1, ${card.expiresAt})`
        yield* sql`
          INSERT INTO live_activity_targets (activity_id, device_id)
          SELECT ${card.id}, d FROM unnest(${room}::text[]) AS d`
        for (const deviceId of room) {
          yield* sql`
            INSERT INTO live_activity_operations (id, activity_id, device_id, seq, op, priority, priority_reason, payload)
            VALUES (${`${card.id}_${deviceId}_1`}, ${card.id}, ${deviceId}, 1, 'start', 10, 'interaction',
                    ${JSON.stringify(startMessage(deviceId))}::jsonb)`
        }
        return room
      }).pipe(Effect.orDie)

    const endForInteraction = (interactionId: string, endMessage: (activityId: string) => PushMessage) =>
      Effect.gen(function*() {
        const ended = yield* sql<{ id: string; sequence: number }>`
          UPDATE live_activities SET status = 'ended', ended_at = now(), updated_at = now(), sequence = sequence + 1
          WHERE interaction_id = ${interactionId} AND status NOT IN ('ended', 'expired')
          RETURNING id, sequence`
        const activity = ended[0]
        if (activity === undefined) return undefined
        // Starts never sent are dropped; devices that show the card get its end.
        yield* sql`UPDATE live_activity_operations SET status = 'superseded'
                   WHERE activity_id = ${activity.id} AND status = 'queued' AND op = 'start'`
        yield* sql`
          INSERT INTO live_activity_operations (id, activity_id, device_id, seq, op, priority, priority_reason, payload)
          SELECT ${activity.id} || '_' || t.device_id || '_' || ${activity.sequence}, t.activity_id, t.device_id,
                 ${activity.sequence}, 'end', 10, 'end', ${JSON.stringify(endMessage(activity.id))}::jsonb
          FROM live_activity_targets t WHERE t.activity_id = ${activity.id} AND t.status = 'active'`
        yield* sql`UPDATE live_activity_targets SET status = 'ended'
                   WHERE activity_id = ${activity.id} AND status IN ('queued', 'active')`
        return activity.id
      }).pipe(Effect.orDie)

    const claimNext = (activityId: string) =>
      sql<QueuedOperation>`
        WITH next AS (
          SELECT DISTINCT ON (o.device_id) o.id FROM live_activity_operations o
          WHERE o.activity_id = ${activityId} AND o.status IN ('queued', 'sending')
          ORDER BY o.device_id, o.seq),
        -- iOS updates and ends wait (queued, in order) for the device's update token.
        ready AS (
          SELECT n.id FROM next n
          JOIN live_activity_operations o ON o.id = n.id
          JOIN devices d ON d.id = o.device_id
          JOIN live_activity_targets t ON t.activity_id = o.activity_id AND t.device_id = o.device_id
          WHERE o.op = 'start' OR d.platform = 'android' OR t.update_token IS NOT NULL),
        claimed AS (
          UPDATE live_activity_operations o SET status = 'sending', attempts = o.attempts + 1
          FROM ready WHERE o.id = ready.id AND o.status = 'queued' AND o.next_attempt_at <= now()
          RETURNING o.*)
        SELECT c.id, c.device_id, c.seq, c.op, c.priority, c.payload, c.attempts, d.platform, d.push_token,
               d.push_to_start_token, t.update_token, d.live_activity_token_environment AS environment
        FROM claimed c
        JOIN devices d ON d.id = c.device_id
        JOIN live_activity_targets t ON t.activity_id = c.activity_id AND t.device_id = c.device_id`.pipe(Effect.orDie)

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

    const recordAccepted = (op: QueuedOperation) =>
      sql.withTransaction(Effect.gen(function*() {
        const rows = yield* sql<{ activityId: string }>`
          UPDATE live_activity_operations SET status = 'accepted', sent_at = now()
          WHERE id = ${op.id} RETURNING activity_id`
        const activityId = rows[0]?.activityId
        if (activityId === undefined || op.op !== "start") return
        yield* sql`UPDATE live_activity_targets SET status = 'active'
                   WHERE activity_id = ${activityId} AND device_id = ${op.deviceId} AND status = 'queued'`
        yield* refreshStatus(activityId)
      })).pipe(Effect.orDie)

    const recordFailed = (op: QueuedOperation, reason: string) =>
      sql.withTransaction(Effect.gen(function*() {
        const rows = yield* sql<{ activityId: string }>`
          UPDATE live_activity_operations SET status = 'failed', error_code = ${reason}, sent_at = now()
          WHERE id = ${op.id} RETURNING activity_id`
        const activityId = rows[0]?.activityId
        if (activityId === undefined || op.op !== "start") return
        yield* sql`UPDATE live_activity_targets SET status = 'failed'
                   WHERE activity_id = ${activityId} AND device_id = ${op.deviceId} AND status = 'queued'`
        yield* refreshStatus(activityId)
      })).pipe(Effect.orDie)

    const requeue = (op: QueuedOperation, reason: string, delayMillis: number) =>
      sql`UPDATE live_activity_operations SET status = 'queued', error_code = ${reason},
            next_attempt_at = now() + make_interval(secs => ${delayMillis / 1000})
          WHERE id = ${op.id}`.pipe(Effect.asVoid, Effect.orDie)

    const withQueuedWork = sql<{ activityId: string }>`
      SELECT DISTINCT o.activity_id FROM live_activity_operations o
      JOIN devices d ON d.id = o.device_id
      JOIN live_activity_targets t ON t.activity_id = o.activity_id AND t.device_id = o.device_id
      WHERE o.status = 'queued' AND o.next_attempt_at <= now()
        AND (o.op = 'start' OR d.platform = 'android' OR t.update_token IS NOT NULL)
      LIMIT 1000`.pipe(
      Effect.map((rows) => rows.map((r) => r.activityId)),
      Effect.orDie
    )

    return ActivitiesRepo.of({ startCard, endForInteraction, claimNext, recordAccepted, recordFailed, requeue, withQueuedWork })
  }))
}
