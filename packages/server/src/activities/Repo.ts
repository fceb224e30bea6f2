/**
 * SQL of live activities: the logical activity, its place on each target
 * device (at most five concurrent per device), and each device's ordered
 * queue of operations. Capacity is checked with the target devices' rows
 * locked, so concurrent starts to one device cannot overfill it. An
 * operation is claimed (committed `sending`) before its provider call, so
 * it is never sent twice.
 */
import { LiveActivity, LiveActivityProps, LiveActivityReadiness } from "@herald/api"
import type { PriorityReason } from "@herald/api"
import { Array as Arr, Clock, Context, Data, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import type { Statement } from "effect/sql"
import { batched } from "../db/Batching.ts"
import type { PushMessage } from "../push/PushMessage.ts"

/** spec Limits: concurrent live activities per device, interactive prompt cards included. */
export const DEVICE_CAPACITY = 5
/** How long iOS updates may wait for an update token before the readiness warns. */
export const UPDATE_TOKEN_DELAY_SECONDS = 30

export interface NewActivity {
  readonly id: string
  readonly userId: string
  readonly tokenId: string
  readonly key: string | null
  readonly interactionId: string | null
  readonly props: Readonly<Record<string, unknown>>
  readonly expiresAt: string
}

/**
 * An operation's id: one per activity, device and sequence (the update
 * statement builds the same in SQL). A routine snapshot that takes an unsent
 * one's place takes its id and sequence too.
 */
const operationId = (activityId: string, deviceId: string, seq: number) => `${activityId}_${deviceId}_${seq}`

/** The next operation of one device, with what sending it needs. */
export interface QueuedOperation {
  readonly id: string
  readonly activityId: string
  readonly deviceId: string
  readonly seq: number
  readonly op: "start" | "update" | "end"
  readonly priority: 5 | 10
  readonly priorityReason: PriorityReason
  readonly status: "queued" | "sending"
  readonly payload: PushMessage
  readonly attempts: number
  readonly due: boolean
  /** How long until a retry's backoff ends (0 when due). */
  readonly dueInMillis: number
  /** The device's unfinished operations, this one included. */
  readonly behind: number
  readonly platform: "ios" | "android"
  readonly pushToken: string
  readonly pushToStartToken: string | null
  readonly updateToken: string | null
  readonly environment: "sandbox" | "production" | null
  /** False once the device can receive nothing (its token refused for good, or the phone changed hands). */
  readonly deviceActive: boolean
}

/** What one mutation's operations came to. */
export interface SeqOutcome {
  readonly accepted: number
  readonly failed: number
  readonly queued: number
}

export type StartResult =
  | { readonly _tag: "Started"; readonly started: ReadonlyArray<string>; readonly full: ReadonlyArray<string> }
  | { readonly _tag: "Full" }

/** A concurrent start took the key first; the caller's transaction must roll back. */
export class KeyTaken extends Data.TaggedError("KeyTaken") {}

/**
 * A routine update or milestone, written only if the activity is still at
 * `expectedSequence` and live. The activity's new props are the payload's
 * `content-state`.
 */
export interface UpdateWrite {
  readonly activityId: string
  readonly expectedSequence: number
  readonly priority: 5 | 10
  readonly reason: PriorityReason
  readonly grants: ReadonlyArray<number>
  readonly payload: PushMessage
}

export interface QueuedUpdate {
  readonly sequence: number
  readonly superseded: number
  /** The devices the update was queued for. */
  readonly deviceIds: ReadonlyArray<string>
  /** Each one's operation (in the order of `deviceIds`): new, or the unsent snapshot it took the place of. */
  readonly operationIds: ReadonlyArray<string>
}

/** An activity's end push, from its last props. */
export type EndMessage = (activityId: string, props: Readonly<Record<string, unknown>>) => PushMessage

/** Advisory-lock namespace (two-key form) of starts that replace a key; the inbox uses another. */
const REPLACE_LOCK_SPACE = 0x4c41 // "LA"

export interface ActivityHead {
  readonly id: string
  readonly status: string
  readonly props: Readonly<Record<string, unknown>>
  readonly sequence: number
  readonly milestoneGrants: ReadonlyArray<number>
  readonly expiresAt: string
}

interface RecordRow {
  readonly id: string
  readonly key: string | null
  readonly props: Record<string, unknown>
  readonly status: LiveActivity["status"]
  readonly sequence: number
  readonly accepted: number
  readonly failed: number
  readonly expiresAt: string
  readonly createdAt: string
  readonly updatedAt: string
  readonly endedAt: string | null
  readonly ready: number
  readonly queuedStarts: number
  readonly awaitingUpdateToken: number
  readonly awaitingSince: string | null
  readonly nextStartAt: string | null
}

/**
 * The record of the activities `where` selects, newest first, in one
 * statement. Each count reads the activity's unsent operations, its starts or
 * its targets by index, never its sent history (a test bounds the rows it
 * visits).
 */
export const recordStatement = (sql: SqlClient.SqlClient, where: Statement.Fragment) =>
  sql<RecordRow>`
    SELECT a.id, a.key, a.props, a.status, a.sequence, a.expires_at, a.created_at, a.updated_at, a.ended_at,
      (SELECT count(*)::int FROM live_activity_operations o
       WHERE o.activity_id = a.id AND o.op = 'start' AND o.status = 'accepted') AS accepted,
      (SELECT count(*)::int FROM live_activity_targets t WHERE t.activity_id = a.id AND t.status = 'failed') AS failed,
      (SELECT count(*)::int FROM live_activity_targets t WHERE t.activity_id = a.id AND t.status = 'active'
         AND NOT EXISTS (SELECT 1 FROM live_activity_operations o WHERE o.activity_id = a.id
           AND o.device_id = t.device_id AND o.status IN ('queued', 'sending'))) AS ready,
      (SELECT count(*)::int FROM live_activity_operations o
       WHERE o.activity_id = a.id AND o.op = 'start' AND o.status IN ('queued', 'sending')) AS queued_starts,
      (SELECT count(DISTINCT o.device_id)::int FROM live_activity_operations o
       JOIN devices d ON d.id = o.device_id
       JOIN live_activity_targets t ON t.activity_id = o.activity_id AND t.device_id = o.device_id
       WHERE o.activity_id = a.id AND o.op <> 'start' AND o.status = 'queued' AND d.platform = 'ios'
         AND t.update_token IS NULL) AS awaiting_update_token,
      -- Since the first update that waited: a newer snapshot superseding it does not restart the wait.
      -- Read through live_activity_operations_unsent_idx (this filter is its predicate): never a walk
      -- through the updates the activity was already sent.
      (SELECT min(o.created_at) FROM live_activity_operations o
       JOIN devices d ON d.id = o.device_id
       JOIN live_activity_targets t ON t.activity_id = o.activity_id AND t.device_id = o.device_id
       WHERE o.activity_id = a.id AND o.op <> 'start' AND o.status IN ('queued', 'superseded') AND d.platform = 'ios'
         AND t.update_token IS NULL AND EXISTS (SELECT 1 FROM live_activity_operations q
           WHERE q.activity_id = a.id AND q.device_id = o.device_id AND q.op <> 'start' AND q.status = 'queued')) AS awaiting_since,
      (SELECT min(o.next_attempt_at) FROM live_activity_operations o
       WHERE o.activity_id = a.id AND o.op = 'start' AND o.status = 'queued') AS next_start_at
    FROM live_activities a WHERE ${where}
    ORDER BY a.created_at DESC, a.id DESC`

/**
 * Operation `o` is an unsent routine update queued after its device's last
 * barrier (start, milestone, end), below sequence `below` (none: any it
 * can see; within one statement every operation is older than its update).
 */
const supersedable = (sql: SqlClient.SqlClient, below: Statement.Fragment | undefined) => {
  const under = (column: Statement.Fragment) => below === undefined ? sql`` : sql`AND ${column} < ${below}`
  return sql`
    o.status = 'queued' AND o.op = 'update' AND o.priority_reason IN ('routine', 'budget_exhausted') ${under(sql`o.seq`)}
      AND o.seq > COALESCE((SELECT max(b.seq) FROM live_activity_operations b
        WHERE b.activity_id = o.activity_id AND b.device_id = o.device_id AND b.status IN ('queued', 'sending')
          ${under(sql`b.seq`)} AND NOT (b.op = 'update' AND b.priority_reason IN ('routine', 'budget_exhausted'))), 0)`
}

/**
 * The shared statement of concurrent updates (group commit): one update per
 * activity (its actor serializes them), the props travelling once, inside the
 * payload (its `content-state`).
 *
 * Its cost grows with the batch and nothing else, whatever the planner's
 * statistics say of the queue: the writes are one JSON object looked up by
 * activity id (`w`), every step reads the batch's own rows by index
 * (`activity_id = ANY(ids)`, or the primary key), and the steps meet through
 * hashed sets (`NOT IN`) and one grouping, never a join the planner could run
 * as a loop over a whole step. A server behind on its updates makes larger
 * batches; each must not cost more per update, or it falls further behind.
 */
export const enqueueStatement = (sql: SqlClient.SqlClient, writes: Arr.NonEmptyReadonlyArray<UpdateWrite>) => {
  const ids = writes.map((w) => w.activityId)
  const byId = JSON.stringify(Object.fromEntries(writes.map((w) => [w.activityId, w])))
  return sql<{ id: string; sequence: number; superseded: number; deviceIds: ReadonlyArray<string>; operationIds: ReadonlyArray<string> }>`
    WITH w AS (SELECT ${byId}::jsonb AS m),
    a AS (
      UPDATE live_activities la SET props = (SELECT m FROM w) -> la.id -> 'payload' -> 'apns' -> 'aps' -> 'content-state',
        sequence = la.sequence + 1, updated_at = now(),
        milestone_grants = ARRAY(SELECT jsonb_array_elements_text((SELECT m FROM w) -> la.id -> 'grants')::bigint)
      WHERE la.id = ANY(${ids}::text[]) AND la.sequence = ((SELECT m FROM w) -> la.id ->> 'expectedSequence')::int
        AND la.status NOT IN ('ended', 'expired', 'failed')
      RETURNING la.id, la.sequence
    ), skipped AS (
      -- The batch's activities the guard refused (moved on elsewhere, or ended): left as they are.
      SELECT x AS id FROM unnest(${ids}::text[]) AS x WHERE x NOT IN (SELECT id FROM a)
    ), t AS (
      -- Each device showing (or about to show) an updated activity, its write (the new sequence is the
      -- expected one's successor), and its newest unfinished operation.
      SELECT t.activity_id AS id, t.device_id, (SELECT m FROM w) -> t.activity_id AS write,
        ((SELECT m FROM w) -> t.activity_id ->> 'expectedSequence')::int + 1 AS sequence,
        (SELECT b.id FROM live_activity_operations b WHERE b.activity_id = t.activity_id AND b.device_id = t.device_id
           AND b.status IN ('queued', 'sending') ORDER BY b.seq DESC LIMIT 1) AS newest
      FROM live_activity_targets t
      WHERE t.activity_id = ANY(${ids}::text[]) AND t.activity_id NOT IN (SELECT id FROM skipped)
        AND t.status IN ('queued', 'active')
    ), rep AS (
      -- A routine update takes the place of the device's unsent routine snapshot when that is the
      -- newest thing queued: the queue stays one snapshot long and its order is kept (the row keeps
      -- its place and its created_at, which the update-token wait counts from).
      -- A snapshot waiting out a provider's backoff keeps waiting (and its attempts count on).
      UPDATE live_activity_operations o SET payload = (SELECT m FROM w) -> o.activity_id -> 'payload',
        priority_reason = (SELECT m FROM w) -> o.activity_id ->> 'reason'
      WHERE o.activity_id = ANY(${ids}::text[])
        AND o.id = ANY(ARRAY(SELECT newest FROM t WHERE (write ->> 'priority')::int = 5 AND newest IS NOT NULL))
        AND o.status = 'queued' AND o.op = 'update' AND o.priority_reason IN ('routine', 'budget_exhausted')
      RETURNING o.id, o.activity_id, o.device_id
    ), ins AS (
      -- Otherwise a new row (also when the snapshot was claimed for sending meanwhile, by another node).
      INSERT INTO live_activity_operations (id, activity_id, device_id, seq, op, priority, priority_reason, payload)
      SELECT t.id || '_' || t.device_id || '_' || t.sequence, t.id, t.device_id, t.sequence, 'update',
        (t.write ->> 'priority')::int, t.write ->> 'reason', t.write -> 'payload'
      FROM t WHERE t.newest IS NULL OR t.newest NOT IN (SELECT id FROM rep)
      RETURNING id, activity_id, device_id
    ), sup AS (
      -- Any newer snapshot (a milestone too) replaces the unsent routine ones after the device's last barrier.
      UPDATE live_activity_operations o SET status = 'superseded'
      WHERE o.activity_id = ANY(${ids}::text[]) AND o.activity_id NOT IN (SELECT id FROM skipped)
        AND o.id NOT IN (SELECT id FROM rep) AND ${supersedable(sql, undefined)}
      RETURNING o.activity_id
    ), answer AS (
      SELECT id AS activity_id, sequence, 0 AS superseded, NULL::text AS device_id, NULL::text AS operation_id FROM a
      UNION ALL SELECT activity_id, NULL, 1, NULL, NULL FROM sup
      UNION ALL SELECT activity_id, NULL, 1, device_id, id FROM rep
      UNION ALL SELECT activity_id, NULL, 0, device_id, id FROM ins
    )
    SELECT activity_id AS id, max(sequence) AS sequence, sum(superseded)::int AS superseded,
      COALESCE(array_agg(device_id ORDER BY device_id) FILTER (WHERE device_id IS NOT NULL), '{}') AS device_ids,
      COALESCE(array_agg(operation_id ORDER BY device_id) FILTER (WHERE operation_id IS NOT NULL), '{}') AS operation_ids
    FROM answer GROUP BY activity_id`
}

export class ActivitiesRepo extends Context.Service<ActivitiesRepo, {
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
  /** The live activity of this token with this key (to replace or refuse a start). */
  readonly liveByKey: (tokenId: string, key: string) => Effect.Effect<string | undefined>
  /** An activity of this token by id or key (the live one with that key, else the newest). */
  readonly findId: (tokenId: string, identifier: string) => Effect.Effect<{ readonly id: string; readonly promptCard: boolean } | undefined>
  /** The activities this token started, newest first, read in one statement. */
  readonly list: (tokenId: string, limit: number) => Effect.Effect<ReadonlyArray<LiveActivity>>
  readonly record: (activityId: string) => Effect.Effect<LiveActivity>
  /**
   * The account's active live-activity-capable devices, or those of `deviceIds`
   * (undefined when one is not the account's; inactive or incapable ones left out).
   */
  readonly targets: (userId: string, deviceIds: ReadonlyArray<string> | undefined) => Effect.Effect<ReadonlyArray<string> | undefined>
  readonly head: (activityId: string) => Effect.Effect<ActivityHead | undefined>
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
  /**
   * Ends the logical activity at once: a device that shows (or may show) it
   * gets its end behind what it has queued; one whose start never went gets
   * nothing more. None when it was already final (ended, expired, failed).
   */
  readonly end: (activityId: string, message: EndMessage) => Effect.Effect<
    { readonly sequence: number; readonly superseded: number } | undefined
  >
  readonly endForInteraction: (interactionId: string, message: EndMessage) => Effect.Effect<string | undefined>
  /** At the deadline: `expired`, queued operations dropped, devices freed. */
  readonly expire: (activityId: string) => Effect.Effect<boolean>
  /** Stores a device's update token for the activity; false when not the person's. */
  readonly setUpdateToken: (userId: string, activityId: string, deviceId: string, token: string) => Effect.Effect<boolean>
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
  readonly outcomeOf: (activityId: string, seq: number) => Effect.Effect<SeqOutcome>
  /** Activities with operations due for at least `graceMillis` (left by a restart, or by an actor that stopped tending them). */
  readonly withQueuedWork: (graceMillis: number) => Effect.Effect<ReadonlyArray<string>>
  /** Live activities without a stored expiry timer (a crash between a start's commit and its timer). */
  readonly liveDeadlines: Effect.Effect<ReadonlyArray<{ readonly id: string; readonly expiresAt: string }>>
}>()("herald/ActivitiesRepo") {
  static readonly layer = Layer.effect(ActivitiesRepo, Effect.gen(function*() {
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
        const live = (yield* sql<{ id: string }>`
          SELECT id FROM live_activities WHERE token_id = ${tokenId} AND key = ${key}
            AND status NOT IN ('ended', 'expired', 'failed') FOR UPDATE`)[0]?.id
        const theirs = live === undefined ? [] : (yield* sql<{ deviceId: string }>`
          SELECT device_id FROM live_activity_targets WHERE activity_id = ${live}`).map((r) => r.deviceId)
        yield* lockDevices([...new Set([...deviceIds, ...theirs])])
        return live
      }).pipe(Effect.orDie)

    const start: ActivitiesRepo["Service"]["start"] = (activity, deviceIds, reason, startMessage) =>
      Effect.gen(function*() {
        yield* lockDevices(deviceIds)
        const counts = yield* sql<{ deviceId: string; n: number }>`
          SELECT t.device_id, count(*)::int AS n FROM live_activity_targets t
          WHERE t.device_id = ANY(${[...deviceIds]}::text[]) AND t.status IN ('queued', 'active')
          GROUP BY t.device_id`
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
        Effect.catchTag("SqlError", Effect.die)
      )

    const liveByKey = (tokenId: string, key: string) =>
      sql<{ id: string }>`SELECT id FROM live_activities WHERE token_id = ${tokenId} AND key = ${key}
                          AND status NOT IN ('ended', 'expired', 'failed')`.pipe(
        Effect.map((rows) => rows[0]?.id),
        Effect.orDie
      )

    const findId = (tokenId: string, identifier: string) =>
      sql<{ id: string; promptCard: boolean }>`
        SELECT id, interaction_id IS NOT NULL AS prompt_card FROM live_activities
        WHERE token_id = ${tokenId} AND (id = ${identifier} OR key = ${identifier})
        ORDER BY (status NOT IN ('ended', 'expired', 'failed')) DESC, created_at DESC LIMIT 1`.pipe(
        Effect.map((rows) => rows[0]),
        Effect.orDie
      )

    const recordRows = (where: Statement.Fragment) => recordStatement(sql, where).pipe(Effect.orDie)

    // The warning is judged on the caller's clock (so a test clock can move it).
    const toRecord = (r: RecordRow, now: number) =>
      new LiveActivity({
        id: r.id,
        key: r.key,
        props: new LiveActivityProps(r.props as LiveActivityProps, { disableChecks: true }),
        status: r.status,
        sequence: r.sequence,
        accepted: r.accepted,
        failed: r.failed,
        expiresAt: r.expiresAt,
        createdAt: r.createdAt,
        updatedAt: r.updatedAt,
        endedAt: r.endedAt,
        readiness: new LiveActivityReadiness({
          ready: r.ready,
          queuedStarts: r.queuedStarts,
          awaitingUpdateToken: r.awaitingUpdateToken,
          warnings: r.awaitingSince !== null && now - Date.parse(r.awaitingSince) >= UPDATE_TOKEN_DELAY_SECONDS * 1000
            ? ["update_token_delayed"]
            : [],
          nextStartAt: r.nextStartAt
        }, { disableChecks: true })
      }, { disableChecks: true })

    // Concurrent answers' records share one statement.
    const recordRow = batched((ids: Arr.NonEmptyReadonlyArray<string>) =>
      Effect.map(recordRows(sql`a.id = ANY(${[...new Set(ids)]}::text[])`), (rows) => {
        const byId = new Map(rows.map((r) => [r.id, r]))
        return ids.map((id) => byId.get(id)!)
      })
    )

    const record = (activityId: string) =>
      Effect.flatMap(recordRow(activityId), (row) => Effect.map(Clock.currentTimeMillis, (now) => toRecord(row, now)))

    const list = (tokenId: string, limit: number) =>
      Effect.flatMap(
        recordRows(sql`a.id IN (SELECT id FROM live_activities WHERE token_id = ${tokenId}
                                ORDER BY created_at DESC, id DESC LIMIT ${limit})`),
        (rows) => Effect.map(Clock.currentTimeMillis, (now) => rows.map((r) => toRecord(r, now)))
      )

    const targets = (userId: string, deviceIds: ReadonlyArray<string> | undefined) =>
      (deviceIds === undefined
        ? sql<{ id: string }>`SELECT id FROM devices WHERE user_id = ${userId} AND active AND live_activities_capable
                              ORDER BY id`.pipe(Effect.map((rows) => rows.map((r) => r.id)))
        // Named devices must all be the account's (else undefined: 404); those that cannot show a card are left out.
        : sql<{ id: string; usable: boolean }>`
            SELECT id, active AND live_activities_capable AS usable FROM devices
            WHERE user_id = ${userId} AND id = ANY(${[...new Set(deviceIds)]}::text[]) ORDER BY id`.pipe(
          Effect.map((rows) => rows.length === new Set(deviceIds).size ? rows.filter((r) => r.usable).map((r) => r.id) : undefined)
        )).pipe(Effect.orDie)

    const head = (activityId: string) =>
      sql<{ id: string; status: string; props: Record<string, unknown>; sequence: number; milestoneGrants: ReadonlyArray<string | number>; expiresAt: string }>`
        SELECT id, status, props, sequence, milestone_grants, expires_at FROM live_activities WHERE id = ${activityId}`.pipe(
        Effect.map((rows) => rows[0] === undefined ? undefined : { ...rows[0], milestoneGrants: rows[0].milestoneGrants.map(Number) }),
        Effect.orDie
      )

    const supersedeRoutine = (activityId: string, belowSeq: number) =>
      sql<{ n: number }>`
        WITH s AS (
          UPDATE live_activity_operations o SET status = 'superseded'
          WHERE o.activity_id = ${activityId} AND ${supersedable(sql, sql`${belowSeq}`)}
          RETURNING 1)
        SELECT count(*)::int AS n FROM s`.pipe(Effect.map((rows) => rows[0]?.n ?? 0))

    const enqueueUpdates = batched((writes: Arr.NonEmptyReadonlyArray<UpdateWrite>) =>
      enqueueStatement(sql, writes).pipe(
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

    const endWhere = (where: Statement.Fragment, message: EndMessage) =>
      Effect.gen(function*() {
        const ended = yield* sql<{ id: string; sequence: number; props: Record<string, unknown> }>`
          UPDATE live_activities SET status = 'ended', ended_at = now(), updated_at = now(), sequence = sequence + 1
          WHERE ${where} AND status NOT IN ('ended', 'expired', 'failed') RETURNING id, sequence, props`
        const activity = ended[0]
        if (activity === undefined) return undefined
        // Its unsent operations are held first (in id order): a claim that committed is seen below
        // as a start in flight, and one still to come finds nothing queued.
        yield* sql`SELECT id FROM live_activity_operations WHERE activity_id = ${activity.id}
                   AND status IN ('queued', 'sending') ORDER BY id FOR UPDATE`
        // Devices that show the card, or may (a start in flight or of unknown fate), get its end after their queue.
        const devices = (yield* sql<{ deviceId: string }>`
          SELECT t.device_id FROM live_activity_targets t
          WHERE t.activity_id = ${activity.id} AND (t.status = 'active' OR (t.status = 'queued' AND EXISTS (
            SELECT 1 FROM live_activity_operations o WHERE o.activity_id = t.activity_id AND o.device_id = t.device_id
              AND o.op = 'start' AND o.status IN ('sending', 'unknown'))))`).map((r) => r.deviceId)
        // The others never got the card: nothing more goes to them (a dropped start or milestone replaces nothing).
        yield* sql`
          UPDATE live_activity_operations SET status = 'superseded', error_code = 'activity_ended'
          WHERE activity_id = ${activity.id} AND status = 'queued' AND NOT (device_id = ANY(${devices}::text[]))`
        const superseded = yield* supersedeRoutine(activity.id, activity.sequence)
        yield* insertOps(activity.id, devices, activity.sequence, "end", 10, "end", () => message(activity.id, activity.props))
        yield* sql`UPDATE live_activity_targets SET status = 'ended'
                   WHERE activity_id = ${activity.id} AND status IN ('queued', 'active')`
        return { id: activity.id, sequence: activity.sequence, superseded }
      })

    const end: ActivitiesRepo["Service"]["end"] = (activityId, message) =>
      sql.withTransaction(endWhere(sql`id = ${activityId}`, message)).pipe(
        Effect.map((r) => r === undefined ? undefined : { sequence: r.sequence, superseded: r.superseded }),
        Effect.orDie
      )

    const endForInteraction = (interactionId: string, message: EndMessage) =>
      endWhere(sql`interaction_id = ${interactionId}`, message).pipe(Effect.map((r) => r?.id), Effect.orDie)

    const expire = (activityId: string) =>
      sql.withTransaction(Effect.gen(function*() {
        const rows = yield* sql`
          UPDATE live_activities SET status = 'expired', updated_at = now(), ended_at = COALESCE(ended_at, now())
          WHERE id = ${activityId} AND status NOT IN ('ended', 'expired', 'failed') RETURNING id`
        // Whatever is still queued (an ended activity's ends included) is past its deadline.
        yield* sql`UPDATE live_activity_operations SET status = 'expired' WHERE activity_id = ${activityId} AND status = 'queued'`
        yield* sql`UPDATE live_activity_targets SET status = 'ended' WHERE activity_id = ${activityId} AND status IN ('queued', 'active')`
        return rows.length > 0
      })).pipe(Effect.orDie)

    const setUpdateToken = (userId: string, activityId: string, deviceId: string, token: string) =>
      sql`
        UPDATE live_activity_targets t SET update_token = ${token}
        FROM devices d, live_activities a
        WHERE t.activity_id = ${activityId} AND t.device_id = ${deviceId} AND d.id = t.device_id AND d.user_id = ${userId}
          AND a.id = t.activity_id AND a.user_id = ${userId}
        RETURNING 1`.pipe(Effect.map((rows) => rows.length > 0), Effect.orDie)

    const nextOperations = (activityId: string) =>
      sql<QueuedOperation>`
        SELECT DISTINCT ON (o.device_id) o.id, o.activity_id, o.device_id, o.seq, o.op, o.priority, o.priority_reason, o.status,
          o.payload, o.attempts, o.next_attempt_at <= now() AS due,
          GREATEST(0, ceil(EXTRACT(EPOCH FROM o.next_attempt_at - now()) * 1000))::int AS due_in_millis,
          (count(*) OVER (PARTITION BY o.device_id))::int AS behind,
          d.platform, d.push_token, d.push_to_start_token,
          t.update_token, d.live_activity_token_environment AS environment, d.active AS device_active
        FROM live_activity_operations o
        JOIN devices d ON d.id = o.device_id
        JOIN live_activity_targets t ON t.activity_id = o.activity_id AND t.device_id = o.device_id
        WHERE o.activity_id = ${activityId} AND o.status IN ('queued', 'sending')
        ORDER BY o.device_id, o.seq`.pipe(Effect.orDie)

    // Concurrent activities' claims share one statement; each id is claimed once. Their activities
    // bound every way to the rows (by primary key, or the queue's index by activity), whatever the
    // planner's statistics say of the queue's size.
    const claimBatch = batched((claims: Arr.NonEmptyReadonlyArray<{ readonly id: string; readonly activityId: string; readonly node: string }>) =>
      sql<{ id: string; payload: PushMessage }>`
        UPDATE live_activity_operations o SET status = 'sending', attempts = o.attempts + 1, claimed_by = v.node, claimed_at = now()
        FROM jsonb_to_recordset(${JSON.stringify(claims.map((c) => ({ id: c.id, node: c.node })))}::jsonb) AS v(id text, node text)
        WHERE o.id = v.id AND o.id = ANY(${claims.map((c) => c.id)}::text[])
          AND o.activity_id = ANY(${[...new Set(claims.map((c) => c.activityId))]}::text[]) AND o.status = 'queued'
        RETURNING o.id, o.payload`.pipe(
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
      sql<{ activityId: string }>`
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
        const rows = yield* sql<{ id: string }>`
          SELECT a.id FROM live_activities a JOIN live_activity_operations o ON o.activity_id = a.id
          WHERE o.id = ${op.id} FOR UPDATE OF a`
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

    const outcomeOf = (activityId: string, seq: number) =>
      sql<SeqOutcome>`
        SELECT count(*) FILTER (WHERE status = 'accepted')::int AS accepted,
               count(*) FILTER (WHERE status IN ('failed', 'expired'))::int AS failed,
               count(*) FILTER (WHERE status IN ('queued', 'sending'))::int AS queued
        FROM live_activity_operations WHERE activity_id = ${activityId} AND seq = ${seq}`.pipe(
        Effect.map((rows) => rows[0]!),
        Effect.orDie
      )

    const withQueuedWork = (graceMillis: number) => sql<{ activityId: string }>`
      SELECT DISTINCT o.activity_id FROM live_activity_operations o
      JOIN devices d ON d.id = o.device_id
      JOIN live_activity_targets t ON t.activity_id = o.activity_id AND t.device_id = o.device_id
      WHERE o.status = 'queued' AND o.next_attempt_at <= now() - make_interval(secs => ${graceMillis / 1000})
        AND (o.op = 'start' OR d.platform = 'android' OR t.update_token IS NOT NULL)
      LIMIT 1000`.pipe(
      Effect.map((rows) => rows.map((r) => r.activityId)),
      Effect.orDie
    )

    const liveDeadlines = sql<{ id: string; expiresAt: string }>`
      SELECT a.id, a.expires_at FROM live_activities a
      WHERE a.status NOT IN ('expired', 'failed') AND NOT EXISTS (
        SELECT 1 FROM cluster_messages m WHERE m.entity_type = 'LiveActivity' AND m.entity_id = a.id)`.pipe(Effect.orDie)

    return ActivitiesRepo.of({
      start,
      lockForReplace,
      liveByKey,
      findId,
      list,
      record,
      targets,
      head,
      enqueueUpdate: enqueueUpdates,
      end,
      endForInteraction,
      expire,
      setUpdateToken,
      nextOperations,
      claim,
      releaseDeadClaims,
      recordAccepted: (op) => settle(op, "accepted", null),
      recordFailed: (op, reason, deviceGone) => settle(op, "failed", reason, deviceGone),
      requeue,
      deferStarts,
      outcomeOf,
      withQueuedWork,
      liveDeadlines
    })
  }))
}
