/**
 * SQL of the activity feed: one row per (account, kind, referenced thing).
 * Writes run in the caller's unit of work (db/UnitOfWork.ts) or transaction
 * when there is one.
 */
import { ActivityFeedItem, ActivityFeedKind } from "@herald/api"
import { Array as Arr, Context, Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { makeWriter, write } from "../db/UnitOfWork.ts"

/** A feed item as stored: the record, whose it is and what it is about. */
const FeedRow = Schema.Struct({ ...ActivityFeedItem.fields, userId: Schema.String, refId: Schema.String })
/** A feed row to write. */
export type FeedRow = typeof FeedRow.Type

const lastPerKey = (rows: Arr.NonEmptyReadonlyArray<FeedRow>) => {
  const byKey = new Map(rows.map((row) => [`${row.userId} ${row.kind} ${row.refId}`, { ...row }]))
  return [...byKey.values()] as unknown as Arr.NonEmptyReadonlyArray<FeedRow>
}

const Recorded = Schema.Struct({ id: Schema.String, inserted: Schema.Boolean })
export type Recorded = typeof Recorded.Type

/** An entry's outcome: what an update of an entry recorded earlier sets. */
export const Concluded = Schema.Struct({
  userId: Schema.String,
  kind: ActivityFeedKind,
  refId: Schema.String,
  title: Schema.String,
  detail: Schema.NullOr(Schema.String),
  result: Schema.NullOr(Schema.String)
})
export type Concluded = typeof Concluded.Type

export class ActivityFeedRepo extends Context.Service<ActivityFeedRepo, {
  /** Inserts the row, or updates the existing row of (user, kind, ref) keeping its id and time. */
  readonly upsert: (row: FeedRow) => Effect.Effect<Recorded>
  /** The same write (the last row of each (user, kind, ref) counts) in the caller's unit of work (now when there is none). */
  readonly add: (rows: ReadonlyArray<FeedRow>) => Effect.Effect<void>
  readonly page: (userId: string, limit: number, offset: number) => Effect.Effect<ReadonlyArray<ActivityFeedItem>>
  readonly count: (userId: string) => Effect.Effect<number>
  /** The outcome of an entry recorded earlier (a live activity's end): its title, detail and result; none recorded, nothing. */
  readonly conclude: (entry: Concluded) => Effect.Effect<void>
}>()("herald/ActivityFeedRepo") {
  static readonly layer = Layer.effect(ActivityFeedRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    // One row per (user, kind, ref), the last one given: one INSERT … ON CONFLICT DO UPDATE cannot touch a row twice,
    // and a unit of work may hold entries of several requests.
    const entries = makeWriter<FeedRow>((rows) =>
      sql`INSERT INTO activity_feed ${sql.insert(lastPerKey(rows))}
          ON CONFLICT (user_id, kind, ref_id) DO UPDATE SET
            source_name = excluded.source_name,
            source_image_url = excluded.source_image_url,
            title = excluded.title,
            detail = excluded.detail,
            url = excluded.url,
            result = excluded.result`)

    // `xmax = 0` only on a freshly inserted row: it tells an insert from an update.
    const upsert = SqlSchema.findOne({
      Request: FeedRow,
      Result: Recorded,
      execute: (row) => sql`${entries.statement([row])} RETURNING id, (xmax = 0) AS inserted`
    })

    const page = SqlSchema.findAll({
      Request: Schema.Struct({ userId: Schema.String, limit: Schema.Number, offset: Schema.Number }),
      Result: ActivityFeedItem,
      execute: ({ limit, offset, userId }) =>
        sql`SELECT id, kind, source_name, source_image_url, title, detail, url, result, created_at
            FROM activity_feed WHERE user_id = ${userId}
            ORDER BY created_at DESC, id DESC LIMIT ${limit} OFFSET ${offset}`
    })

    const count = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ n: Schema.Number }),
      execute: (userId) => sql`SELECT count(*)::int AS n FROM activity_feed WHERE user_id = ${userId}`
    })

    const conclude = SqlSchema.void({
      Request: Concluded,
      execute: (e) =>
        sql`UPDATE activity_feed SET title = ${e.title}, detail = ${e.detail}, result = ${e.result}
            WHERE user_id = ${e.userId} AND kind = ${e.kind} AND ref_id = ${e.refId}`
    })

    return ActivityFeedRepo.of({
      conclude: (entry) => conclude(entry).pipe(Effect.orDie),
      upsert: (row) => upsert(row).pipe(Effect.orDie),
      add: (rows) => write(entries, rows),
      page: (userId, limit, offset) => page({ userId, limit, offset }).pipe(Effect.orDie),
      count: (userId) => count(userId).pipe(Effect.map((row) => row.n), Effect.orDie)
    })
  }))
}
