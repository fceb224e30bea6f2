/**
 * SQL of the activity feed: one row per (account, kind, referenced thing).
 * Statements run on the enclosing transaction's connection when a caller
 * opened one.
 */
import { ActivityFeedItem, ActivityFeedKind } from "@herald/api"
import { Array as Arr, Context, Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import type { Statement } from "effect/sql"

/** A feed row to write. */
export type FeedRow = {
  readonly id: string
  readonly userId: string
  readonly kind: ActivityFeedKind
  readonly refId: string
  readonly sourceName: string
  readonly sourceImageUrl: string | null
  readonly title: string
  readonly detail: string | null
  readonly url: string | null
  readonly result: string | null
  readonly createdAt: string
}

const Recorded = Schema.Struct({ id: Schema.String, inserted: Schema.Boolean })
export type Recorded = typeof Recorded.Type

export class ActivityFeedRepo extends Context.Service<ActivityFeedRepo, {
  /** Inserts the row, or updates the existing row of (user, kind, ref) keeping its id and time. */
  readonly upsert: (row: FeedRow) => Effect.Effect<Recorded>
  /** The same write as a statement to run inside a caller's statement (a CTE member). */
  readonly upsertStatement: (rows: Arr.NonEmptyReadonlyArray<FeedRow>) => Statement.Statement<unknown>
  readonly page: (userId: string, limit: number, offset: number) => Effect.Effect<ReadonlyArray<ActivityFeedItem>>
  readonly count: (userId: string) => Effect.Effect<number>
}>()("herald/ActivityFeedRepo") {
  static readonly layer = Layer.effect(ActivityFeedRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const upsertStatement = (rows: Arr.NonEmptyReadonlyArray<FeedRow>) =>
      sql`INSERT INTO activity_feed ${sql.insert(Arr.map(rows, (row) => ({ ...row })))}
          ON CONFLICT (user_id, kind, ref_id) DO UPDATE SET
            source_name = excluded.source_name,
            source_image_url = excluded.source_image_url,
            title = excluded.title,
            detail = excluded.detail,
            url = excluded.url,
            result = excluded.result`

    // `xmax = 0` only on a freshly inserted row: it tells an insert from an update.
    const upsert = SqlSchema.findOne({
      Request: Schema.Struct({
        id: Schema.String,
        userId: Schema.String,
        kind: ActivityFeedKind,
        refId: Schema.String,
        sourceName: Schema.String,
        sourceImageUrl: Schema.NullOr(Schema.String),
        title: Schema.String,
        detail: Schema.NullOr(Schema.String),
        url: Schema.NullOr(Schema.String),
        result: Schema.NullOr(Schema.String),
        createdAt: Schema.String
      }),
      Result: Recorded,
      execute: (row) => sql`${upsertStatement([row])} RETURNING id, (xmax = 0) AS inserted`
    })

    const page = SqlSchema.findAll({
      Request: Schema.Struct({ userId: Schema.String, limit: Schema.Number, offset: Schema.Number }),
      Result: ActivityFeedItem,
      execute: ({ limit, offset, userId }) =>
        sql`SELECT id, kind, source_name, source_image_url, title, detail, url, result, created_at
            FROM activity_feed WHERE user_id = ${userId}
            ORDER BY created_at DESC, id DESC LIMIT ${limit} OFFSET ${offset}`
    })

    return ActivityFeedRepo.of({
      upsert: (row) => upsert(row).pipe(Effect.orDie),
      upsertStatement,
      page: (userId, limit, offset) => page({ userId, limit, offset }).pipe(Effect.orDie),
      count: (userId) =>
        sql<{ n: number }>`SELECT count(*)::int AS n FROM activity_feed WHERE user_id = ${userId}`.pipe(
          Effect.map((rows) => rows[0]?.n ?? 0),
          Effect.orDie
        )
    })
  }))
}
