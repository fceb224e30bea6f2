/** Provisional: replaced by the inbox capability's ActivityFeed at integration. */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import type { Statement } from "effect/sql"
import { makeId } from "../lib/Ids.ts"

export interface ActivityFeedEntry {
  readonly userId: string
  readonly kind: "notification" | "live_activity" | "response"
  readonly refId: string
  readonly sourceName: string
  readonly sourceImageUrl: string | null
  readonly title: string
  readonly detail: string | null
  readonly url: string | null
  readonly result: string | null
}

export class ActivityFeed extends Context.Service<ActivityFeed, {
  readonly record: (entry: ActivityFeedEntry) => Effect.Effect<void>
  readonly recordStatement: (entry: ActivityFeedEntry) => Effect.Effect<Statement.Statement<unknown>>
}>()("herald/ActivityFeed") {
  static readonly layer = Layer.effect(ActivityFeed, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const recordStatement = (entry: ActivityFeedEntry) =>
      Effect.map(makeId("afi"), (id) => sql`INSERT INTO activity_feed ${sql.insert({ id, ...entry })} ON CONFLICT DO NOTHING`)
    const record = (entry: ActivityFeedEntry) =>
      Effect.flatMap(makeId("afi"), (id) => sql`INSERT INTO activity_feed ${sql.insert({ id, ...entry })} ON CONFLICT DO NOTHING`).pipe(Effect.asVoid, Effect.orDie)
    return ActivityFeed.of({ record, recordStatement })
  }))
}
