/**
 * The read model of live activities: an activity's record as the API shows
 * it (its readiness counted from the queue), lists of them, what one
 * mutation's operations came to, and finding an activity by id or key. Reads
 * only; every row decoded with Schema, the record's fields taken from the
 * contract's.
 */
import { LiveActivity, LiveActivityProps, LiveActivityReadiness } from "@herald/api"
import { Array as Arr, Clock, Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import type { Statement } from "effect/sql"
import { batched } from "../db/Batching.ts"
import { SeqOutcome } from "./Rows.ts"

/** How long iOS updates may wait for an update token before the readiness warns. */
export const UPDATE_TOKEN_DELAY_SECONDS = 30

const RecordRow = Schema.Struct({
  id: LiveActivity.fields.id,
  key: LiveActivity.fields.key,
  props: LiveActivityProps,
  status: LiveActivity.fields.status,
  sequence: LiveActivity.fields.sequence,
  accepted: LiveActivity.fields.accepted,
  failed: LiveActivity.fields.failed,
  expiresAt: LiveActivity.fields.expiresAt,
  createdAt: LiveActivity.fields.createdAt,
  updatedAt: LiveActivity.fields.updatedAt,
  endedAt: LiveActivity.fields.endedAt,
  ready: LiveActivityReadiness.fields.ready,
  queuedStarts: LiveActivityReadiness.fields.queuedStarts,
  awaitingUpdateToken: LiveActivityReadiness.fields.awaitingUpdateToken,
  awaitingSince: Schema.NullOr(Schema.String),
  nextStartAt: LiveActivityReadiness.fields.nextStartAt
})
type RecordRow = typeof RecordRow.Type

const decodeRecords = Schema.decodeUnknownEffect(Schema.Array(RecordRow))
const decodeOutcome = Schema.decodeUnknownEffect(Schema.Tuple([SeqOutcome]))
const decodeFound = Schema.decodeUnknownEffect(Schema.Array(Schema.Struct({ id: Schema.String, promptCard: Schema.Boolean })))
const decodeIds = Schema.decodeUnknownEffect(Schema.Array(Schema.Struct({ id: Schema.String })))

/**
 * The record of the activities `where` selects, newest first, in one
 * statement. Each count reads the activity's unsent operations, its starts or
 * its targets by index, never its sent history (a test bounds the rows it
 * visits).
 */
export const recordStatement = (sql: SqlClient.SqlClient, where: Statement.Fragment) =>
  sql`
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

export class ReadModelRepo extends Context.Service<ReadModelRepo, {
  /** The live activity of this token with this key (to replace or refuse a start). */
  readonly liveByKey: (tokenId: string, key: string) => Effect.Effect<string | undefined>
  /** An activity of this token by id or key (the live one with that key, else the newest). */
  readonly findId: (tokenId: string, identifier: string) => Effect.Effect<{ readonly id: string; readonly promptCard: boolean } | undefined>
  /** The activities this token started, newest first, read in one statement. */
  readonly list: (tokenId: string, limit: number) => Effect.Effect<ReadonlyArray<LiveActivity>>
  /** The person's activities from every token: the live ones first, then the others, each newest first. */
  readonly listForUser: (userId: string, limit: number) => Effect.Effect<ReadonlyArray<LiveActivity>>
  readonly record: (activityId: string) => Effect.Effect<LiveActivity>
  readonly outcomeOf: (activityId: string, seq: number) => Effect.Effect<SeqOutcome>
}>()("herald/ReadModelRepo") {
  static readonly layer = Layer.effect(ReadModelRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const liveByKey = (tokenId: string, key: string) =>
      sql`SELECT id FROM live_activities WHERE token_id = ${tokenId} AND key = ${key}
          AND status NOT IN ('ended', 'expired', 'failed')`.pipe(
        Effect.flatMap(decodeIds),
        Effect.map((rows) => rows[0]?.id),
        Effect.orDie
      )

    const findId = (tokenId: string, identifier: string) =>
      sql`
        SELECT id, interaction_id IS NOT NULL AS prompt_card FROM live_activities
        WHERE token_id = ${tokenId} AND (id = ${identifier} OR key = ${identifier})
        ORDER BY (status NOT IN ('ended', 'expired', 'failed')) DESC, created_at DESC LIMIT 1`.pipe(
        Effect.flatMap(decodeFound),
        Effect.map((rows) => rows[0]),
        Effect.orDie
      )

    const recordRows = (where: Statement.Fragment) => recordStatement(sql, where).pipe(Effect.flatMap(decodeRecords), Effect.orDie)

    // The warning is judged on the caller's clock (so a test clock can move it). The row was
    // decoded with the record's own field schemas: its checks are not run a second time.
    const toRecord = (r: RecordRow, now: number) =>
      new LiveActivity({
        id: r.id,
        key: r.key,
        props: r.props,
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

    const live = (status: string) => status === "starting" || status === "active" || status === "partial"
    const listForUser = (userId: string, limit: number) =>
      Effect.flatMap(
        recordRows(sql`a.id IN (SELECT id FROM live_activities WHERE user_id = ${userId}
                                ORDER BY status IN ('starting', 'active', 'partial') DESC, created_at DESC, id DESC
                                LIMIT ${limit})`),
        (rows) =>
          Effect.map(Clock.currentTimeMillis, (now) =>
            // Newest first already: a stable sort keeps that order within each part.
            [...rows].sort((a, b) => Number(live(b.status)) - Number(live(a.status))).map((r) => toRecord(r, now)))
      )

    const outcomeOf = (activityId: string, seq: number) =>
      sql`
        SELECT count(*) FILTER (WHERE status = 'accepted')::int AS accepted,
               count(*) FILTER (WHERE status IN ('failed', 'expired'))::int AS failed,
               count(*) FILTER (WHERE status IN ('queued', 'sending'))::int AS queued
        FROM live_activity_operations WHERE activity_id = ${activityId} AND seq = ${seq}`.pipe(
        Effect.flatMap(decodeOutcome),
        Effect.map((rows) => rows[0]),
        Effect.orDie
      )

    return ReadModelRepo.of({ liveByKey, findId, list, listForUser, record, outcomeOf })
  }))
}
