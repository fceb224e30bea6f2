/**
 * SQL of a live activity's lifecycle: the logical activity and its place on
 * each target device (at most five concurrent per device), from its start
 * (capacity checked with the target devices' rows locked, so concurrent
 * starts to one device cannot overfill it) through a replacing start, its end
 * and its expiry. Every row read is decoded with Schema.
 */
import { Array as Arr, Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import type { Statement } from "effect/sql"
import type { PushMessage } from "../push/PushMessage.ts"
import { DEVICE_CAPACITY } from "./Capacity.ts"
import { ClosedRow, HeadRow, KeyTaken, operationId } from "./Rows.ts"
import type { ActivityHead, EndMessage, NewActivity, StartResult } from "./Rows.ts"
import { supersedable } from "./UpdateStatement.ts"

/** Advisory-lock namespace (two-key form) of starts that replace a key; the inbox uses another. */
const REPLACE_LOCK_SPACE = 0x4c41 // "LA"

const decodeIds = Schema.decodeUnknownEffect(Schema.Array(Schema.Struct({ id: Schema.String })))
const decodeDeviceIds = Schema.decodeUnknownEffect(Schema.Array(Schema.Struct({ deviceId: Schema.String })))
const decodeCounts = Schema.decodeUnknownEffect(Schema.Array(Schema.Struct({ deviceId: Schema.String, n: Schema.Number })))
const decodeCount = Schema.decodeUnknownEffect(Schema.Tuple([Schema.Struct({ n: Schema.Number })]))
const decodeHeads = Schema.decodeUnknownEffect(Schema.Array(HeadRow))
const decodeClosed = Schema.decodeUnknownEffect(Schema.Array(ClosedRow))
const decodeDeadlines = Schema.decodeUnknownEffect(Schema.Array(Schema.Struct({ id: Schema.String, expiresAt: Schema.String })))

export class LifecycleRepo extends Context.Service<LifecycleRepo, {
  /** Runs `effect` in one transaction (joining the caller's, if any); a database failure is a defect. */
  readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /**
   * Creates the activity on the devices with room (full ones are its failed
   * targets) and queues each start (in the caller's transaction): `Full`
   * when every device is full; fails with `KeyTaken` when a concurrent start
   * took the key first.
   */
  readonly start: (
    activity: NewActivity,
    deviceIds: ReadonlyArray<string>,
    reason: "start" | "interaction",
    startMessage: (deviceId: string) => PushMessage
  ) => Effect.Effect<StartResult, KeyTaken>
  /**
   * Takes the key's replace lock, then the live activity's row, then the rows
   * of its devices and the new start's in id order (in the caller's
   * transaction, before anything else): the order an update or end of that
   * activity takes them (its row, then its devices), so they cannot deadlock,
   * and replacing starts of one key run one after another. Answers the live
   * activity to replace, if any.
   */
  readonly lockForReplace: (tokenId: string, key: string, deviceIds: ReadonlyArray<string>) => Effect.Effect<string | undefined>
  readonly head: (activityId: string) => Effect.Effect<ActivityHead | undefined>
  /**
   * Ends the logical activity at once: a device that shows (or may show) it
   * gets its end behind what it has queued; one whose start never went gets
   * nothing more. None when it was already final (ended, expired, failed).
   * In the caller's transaction (`transaction`).
   */
  readonly end: (activityId: string, message: EndMessage) => Effect.Effect<
    { readonly sequence: number; readonly superseded: number; readonly closed: ClosedRow } | undefined
  >
  /** A prompt's card ends with its prompt (in the caller's transaction); answers its id. */
  readonly endForInteraction: (interactionId: string, message: EndMessage) => Effect.Effect<string | undefined>
  /** At the deadline: `expired`, queued operations dropped, devices freed (in the caller's transaction); none when already final. */
  readonly expire: (activityId: string) => Effect.Effect<ClosedRow | undefined>
  /** Stores a device's update token for the activity; false when not the person's. */
  readonly setUpdateToken: (userId: string, activityId: string, deviceId: string, token: string) => Effect.Effect<boolean>
  /** Live activities without a stored expiry timer (a crash between a start's commit and its timer). */
  readonly liveDeadlines: Effect.Effect<ReadonlyArray<{ readonly id: string; readonly expiresAt: string }>>
}>()("herald/LifecycleRepo") {
  static readonly layer = Layer.effect(LifecycleRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insertOps = (activityId: string, deviceIds: ReadonlyArray<string>, seq: number, op: string, priority: number, reason: string, payload: (deviceId: string) => PushMessage) =>
      !Arr.isReadonlyArrayNonEmpty(deviceIds) ? Effect.void : sql`
        INSERT INTO live_activity_operations ${sql.insert(Arr.map(deviceIds, (deviceId) => ({
          id: operationId(activityId, deviceId, seq),
          activityId,
          deviceId,
          seq,
          op,
          priority,
          priorityReason: reason,
          payload: JSON.stringify(payload(deviceId))
        })))}`.pipe(Effect.asVoid)

    // Locked in id order: concurrent starts to the same devices queue here. NO KEY UPDATE, not
    // UPDATE: it must not block the key-share locks that inserting any operation for those
    // devices takes (its foreign key), or a start would wait in cycles with ends and sends.
    const lockDevices = (deviceIds: ReadonlyArray<string>) =>
      sql`SELECT id FROM devices WHERE id = ANY(${[...deviceIds]}::text[]) ORDER BY id FOR NO KEY UPDATE`

    const lockForReplace = (tokenId: string, key: string, deviceIds: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        yield* sql`SELECT pg_advisory_xact_lock(${REPLACE_LOCK_SPACE}, hashtext(${tokenId} || ' ' || ${key}))`
        const live = (yield* decodeIds(yield* sql`
          SELECT id FROM live_activities WHERE token_id = ${tokenId} AND key = ${key}
            AND status NOT IN ('ended', 'expired', 'failed') FOR UPDATE`))[0]?.id
        const theirs = live === undefined ? [] : (yield* decodeDeviceIds(yield* sql`
          SELECT device_id FROM live_activity_targets WHERE activity_id = ${live}`)).map((r) => r.deviceId)
        yield* lockDevices([...new Set([...deviceIds, ...theirs])])
        return live
      }).pipe(Effect.orDie)

    const start: LifecycleRepo["Service"]["start"] = (activity, deviceIds, reason, startMessage) =>
      Effect.gen(function*() {
        yield* lockDevices(deviceIds)
        const counts = yield* decodeCounts(yield* sql`
          SELECT t.device_id, count(*)::int AS n FROM live_activity_targets t
          WHERE t.device_id = ANY(${[...deviceIds]}::text[]) AND t.status IN ('queued', 'active')
          GROUP BY t.device_id`)
        const used = new Map(counts.map((c) => [c.deviceId, c.n]))
        const started = deviceIds.filter((id) => (used.get(id) ?? 0) < DEVICE_CAPACITY)
        const full = deviceIds.filter((id) => (used.get(id) ?? 0) >= DEVICE_CAPACITY)
        if (started.length === 0) return { _tag: "Full" } as const
        yield* sql`
          INSERT INTO live_activities (id, user_id, token_id, key, interaction_id, props, status, sequence, expires_at)
          VALUES (${activity.id}, ${activity.userId}, ${activity.tokenId}, ${activity.key}, ${activity.interactionId},
                  ${JSON.stringify(activity.props)}::jsonb, 'starting', 1, ${activity.expiresAt})`
        yield* sql`
          INSERT INTO live_activity_targets (activity_id, device_id, status)
          SELECT ${activity.id}, d.id, CASE WHEN d.id = ANY(${full}::text[]) THEN 'failed' ELSE 'queued' END
          FROM unnest(${[...deviceIds]}::text[]) AS d(id)`
        yield* insertOps(activity.id, started, 1, "start", 10, reason, startMessage)
        return { _tag: "Started", started, full } as const
      }).pipe(
        Effect.catchIf(
          (e) => e._tag === "SqlError" && e.reason._tag === "UniqueViolation" && e.reason.constraint === "live_activities_key",
          () => Effect.fail(new KeyTaken())
        ),
        Effect.catchTag("SqlError", Effect.die),
        Effect.catchTag("SchemaError", Effect.die)
      )

    const head = (activityId: string) =>
      sql`SELECT id, status, props, sequence, milestone_grants, expires_at FROM live_activities WHERE id = ${activityId}`.pipe(
        Effect.flatMap(decodeHeads),
        Effect.map((rows) => rows[0] === undefined ? undefined : { ...rows[0], milestoneGrants: rows[0].milestoneGrants.map(Number) }),
        Effect.orDie
      )

    const supersedeRoutine = (activityId: string, belowSeq: number) =>
      sql`
        WITH s AS (
          UPDATE live_activity_operations o SET status = 'superseded'
          WHERE o.activity_id = ${activityId} AND ${supersedable(sql, sql`${belowSeq}`)}
          RETURNING 1)
        SELECT count(*)::int AS n FROM s`.pipe(
        Effect.flatMap(decodeCount),
        Effect.map((rows) => rows[0].n)
      )

    const endWhere = (where: Statement.Fragment, message: EndMessage) =>
      Effect.gen(function*() {
        const ended = yield* decodeClosed(yield* sql`
          UPDATE live_activities SET status = 'ended', ended_at = now(), updated_at = now(), sequence = sequence + 1
          WHERE ${where} AND status NOT IN ('ended', 'expired', 'failed') RETURNING id, user_id, interaction_id, sequence, props`)
        const activity = ended[0]
        if (activity === undefined) return undefined
        // Its unsent operations are held first (in id order): a claim that committed is seen below
        // as a start in flight, and one still to come finds nothing queued.
        yield* sql`SELECT id FROM live_activity_operations WHERE activity_id = ${activity.id}
                   AND status IN ('queued', 'sending') ORDER BY id FOR UPDATE`
        // Devices that show the card, or may (a start in flight or of unknown fate), get its end after their queue.
        const devices = (yield* decodeDeviceIds(yield* sql`
          SELECT t.device_id FROM live_activity_targets t
          WHERE t.activity_id = ${activity.id} AND (t.status = 'active' OR (t.status = 'queued' AND EXISTS (
            SELECT 1 FROM live_activity_operations o WHERE o.activity_id = t.activity_id AND o.device_id = t.device_id
              AND o.op = 'start' AND o.status IN ('sending', 'unknown'))))`)).map((r) => r.deviceId)
        // The others never got the card: nothing more goes to them (a dropped start or milestone replaces nothing).
        yield* sql`
          UPDATE live_activity_operations SET status = 'superseded', error_code = 'activity_ended'
          WHERE activity_id = ${activity.id} AND status = 'queued' AND NOT (device_id = ANY(${devices}::text[]))`
        const superseded = yield* supersedeRoutine(activity.id, activity.sequence)
        yield* insertOps(activity.id, devices, activity.sequence, "end", 10, "end", () => message(activity.id, activity.props))
        yield* sql`UPDATE live_activity_targets SET status = 'ended'
                   WHERE activity_id = ${activity.id} AND status IN ('queued', 'active')`
        return { id: activity.id, sequence: activity.sequence, superseded, closed: activity }
      }).pipe(Effect.orDie)

    const end = (activityId: string, message: EndMessage) => endWhere(sql`id = ${activityId}`, message)

    const endForInteraction = (interactionId: string, message: EndMessage) =>
      endWhere(sql`interaction_id = ${interactionId}`, message).pipe(Effect.map((r) => r?.id))

    const expire = (activityId: string) =>
      Effect.gen(function*() {
        const rows = yield* decodeClosed(yield* sql`
          UPDATE live_activities SET status = 'expired', updated_at = now(), ended_at = COALESCE(ended_at, now())
          WHERE id = ${activityId} AND status NOT IN ('ended', 'expired', 'failed')
          RETURNING id, user_id, interaction_id, sequence, props`)
        // Whatever is still queued (an ended activity's ends included) is past its deadline.
        yield* sql`UPDATE live_activity_operations SET status = 'expired' WHERE activity_id = ${activityId} AND status = 'queued'`
        yield* sql`UPDATE live_activity_targets SET status = 'ended' WHERE activity_id = ${activityId} AND status IN ('queued', 'active')`
        return rows[0]
      }).pipe(Effect.orDie)

    const setUpdateToken = (userId: string, activityId: string, deviceId: string, token: string) =>
      sql`
        UPDATE live_activity_targets t SET update_token = ${token}
        FROM devices d, live_activities a
        WHERE t.activity_id = ${activityId} AND t.device_id = ${deviceId} AND d.id = t.device_id AND d.user_id = ${userId}
          AND a.id = t.activity_id AND a.user_id = ${userId}
        RETURNING 1`.pipe(Effect.map((rows) => rows.length > 0), Effect.orDie)

    const liveDeadlines = sql`
      SELECT a.id, a.expires_at FROM live_activities a
      WHERE a.status NOT IN ('expired', 'failed') AND NOT EXISTS (
        SELECT 1 FROM cluster_messages m WHERE m.entity_type = 'LiveActivity' AND m.entity_id = a.id)`.pipe(
      Effect.flatMap(decodeDeadlines),
      Effect.orDie
    )

    return LifecycleRepo.of({
      transaction: (effect) => sql.withTransaction(effect).pipe(Effect.catchTag("SqlError", Effect.die)),
      start,
      lockForReplace,
      head,
      end,
      endForInteraction,
      expire,
      setUpdateToken,
      liveDeadlines
    })
  }))
}
