/**
 * Concurrent updates of many activities share one statement (group commit).
 * Its cost must grow with the batch, not with the batch squared nor with all
 * the work queued on the server: a server behind on its updates makes larger
 * batches, and a batch that cost more per update would put it further
 * behind. PostgreSQL's own count of the rows the statement visits (EXPLAIN
 * ANALYZE) bounds it, with the planner's statistics taken while nothing was
 * queued, as they often are under a sudden load.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { liveActivityMessage } from "../../src/activities/Cards.ts"
import { LifecycleRepo } from "../../src/activities/LifecycleRepo.ts"
import { ActivitiesRepos } from "../../src/activities/Repos.ts"
import type { UpdateWrite } from "../../src/activities/Rows.ts"
import { enqueueStatement } from "../../src/activities/UpdateStatement.ts"
import { MigrationsLayer } from "../../src/db/Migrations.ts"
import { Identity } from "../../src/identity/Identity.ts"
import { TestSqlLayer } from "../../../../test/support/database.ts"
import { rowsVisited } from "../../../../test/support/explain.ts"

const ACTIVITIES = 100

const Deps = Layer.mergeAll(ActivitiesRepos, Identity.layer).pipe(
  Layer.provideMerge(MigrationsLayer),
  Layer.provideMerge(TestSqlLayer)
)

/** One update of each activity, at its current sequence; every fourth a milestone when `milestones`. */
const batch = (sql: SqlClient.SqlClient, ids: ReadonlyArray<string>, milestones: boolean) =>
  Effect.map(sql<{ id: string; sequence: number }>`SELECT id, sequence FROM live_activities WHERE id = ANY(${ids}::text[])`, (rows) =>
    rows.map((r, i): UpdateWrite => {
      const milestone = milestones && i % 4 === 0
      return {
        activityId: r.id,
        expectedSequence: r.sequence,
        priority: milestone ? 10 : 5,
        reason: milestone ? "milestone" : "routine",
        grants: [],
        payload: liveActivityMessage({ activityId: r.id, event: "update", state: { title: "t", progress: i / ACTIVITIES }, priority: milestone ? 10 : 5, timestampSeconds: 0 })
      }
    }))

layer(Deps, { excludeTestServices: true, timeout: "120 seconds" })("the shared update statement", (it) => {
  it.effect("a batch of n activities visits rows in proportion to n, not n² nor the whole queue", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const identity = yield* Identity
      const repo = yield* LifecycleRepo
      const person = yield* identity.createUser({ email: `batch-${Date.now()}@example.test`, name: "Batch" })
      const ids: Array<string> = []
      for (let n = 0; n < ACTIVITIES; n++) {
        const phones = yield* Effect.forEach(["ios", "android"] as const, (platform) =>
          identity.registerDevice(person.id, { platform, pushToken: `batch-${platform}-${n}-${Date.now()}`, liveActivitiesCapable: true }))
        const id = `act_batch${n}_${Date.now()}`
        yield* sql.withTransaction(repo.start(
          { id, userId: person.id, tokenId: "tok_batch", key: null, interactionId: null, props: { title: "t" }, expiresAt: new Date(Date.now() + 3_600_000).toISOString() },
          phones.map((p) => p.id),
          "start",
          () => liveActivityMessage({ activityId: id, event: "start", state: { title: "t" }, priority: 10, timestampSeconds: 0 })
        ))
        ids.push(id)
      }
      // Shown everywhere, nothing queued: then the statistics are taken.
      yield* sql`UPDATE live_activity_operations SET status = 'accepted', sent_at = now()`
      yield* sql`UPDATE live_activity_targets SET status = 'active'`
      yield* sql`ANALYZE`
      // Each phone gets a routine snapshot to wait for its pacing: the whole queue is 2n rows.
      const first = yield* enqueueStatement(sql, (yield* batch(sql, ids, false)) as never)
      assert.strictEqual(first.length, ACTIVITIES)

      // The measured batch: routine snapshots take the place of the queued ones, milestones supersede them.
      const visited = yield* rowsVisited(sql, enqueueStatement(sql, (yield* batch(sql, ids, true)) as never))
      const queued = yield* sql<{ op: string; status: string; n: number }>`
        SELECT priority_reason AS op, status, count(*)::int AS n FROM live_activity_operations
        WHERE op = 'update' GROUP BY 1, 2 ORDER BY 1, 2`
      assert.deepStrictEqual(queued.map((r) => [r.op, r.status, r.n]), [
        ["milestone", "queued", ACTIVITIES / 2],
        ["routine", "queued", ACTIVITIES * 2 - ACTIVITIES / 2],
        ["routine", "superseded", ACTIVITIES / 2]
      ])
      // About 37 rows an activity (its row, two targets, their operations and barriers); a step run
      // as a loop over another visits n² (the statement before this bound: 213,175 for 100).
      assert.isBelow(visited, 60 * ACTIVITIES, `rows visited by a batch of ${ACTIVITIES}`)
    }))
})
