/**
 * An activity's record costs the same on its first update as after eight
 * hours of them: every update a device was sent stays a row, so a record read
 * that walked them would slow every answer as the activity ages. PostgreSQL's
 * own count of the rows the statement visits (EXPLAIN ANALYZE) bounds it.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { liveActivityMessage } from "../../src/activities/Cards.ts"
import { LifecycleRepo } from "../../src/activities/LifecycleRepo.ts"
import { ReadModelRepo, recordStatement } from "../../src/activities/ReadModelRepo.ts"
import { ActivitiesRepos } from "../../src/activities/Repos.ts"
import { MigrationsLayer } from "../../src/db/Migrations.ts"
import { Identity } from "../../src/identity/Identity.ts"
import { TestSqlLayer } from "../../../../test/support/database.ts"
import { rowsVisited } from "../../../../test/support/explain.ts"

const SENT_PER_DEVICE = 3_000

const Deps = Layer.mergeAll(ActivitiesRepos, Identity.layer).pipe(
  Layer.provideMerge(MigrationsLayer),
  Layer.provideMerge(TestSqlLayer)
)

layer(Deps, { excludeTestServices: true, timeout: "60 seconds" })("an activity's history", (it) => {
  it.effect("its record reads the unsent operations, starts and targets, never the updates already sent", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const identity = yield* Identity
      const repo = yield* LifecycleRepo
      const person = yield* identity.createUser({ email: `history-${Date.now()}@example.test`, name: "History" })
      const phone = (platform: "ios" | "android", name: string) =>
        identity.registerDevice(person.id, { platform, pushToken: `history-${name}-${Date.now()}`, liveActivitiesCapable: true })
      const iphone = yield* phone("ios", "iphone")
      const pixel = yield* phone("android", "pixel")
      const waiting = yield* phone("ios", "waiting")
      for (const d of [iphone, waiting]) yield* identity.setPushToStartToken(person.id, d.id, `history-pts-${d.id}`)
      const id = `act_history${Date.now()}`
      yield* sql.withTransaction(repo.start(
        { id, userId: person.id, tokenId: "tok_history", key: null, interactionId: null, props: { title: "t" }, expiresAt: new Date(Date.now() + 28_800_000).toISOString() },
        [iphone.id, pixel.id, waiting.id],
        "start",
        () => liveActivityMessage({ activityId: id, event: "start", state: { title: "t" }, priority: 10, timestampSeconds: 0 })
      ))
      // Every phone shows the card; the first iPhone and the Android phone were sent 3,000 updates each.
      yield* sql`UPDATE live_activity_operations SET status = 'accepted', sent_at = now() WHERE activity_id = ${id}`
      yield* sql`UPDATE live_activity_targets SET status = 'active' WHERE activity_id = ${id}`
      yield* sql`UPDATE live_activity_targets SET update_token = 'history-update' WHERE activity_id = ${id} AND device_id = ${iphone.id}`
      yield* sql`
        INSERT INTO live_activity_operations (id, activity_id, device_id, seq, op, priority, priority_reason, payload, status, sent_at)
        SELECT ${id} || '_' || d || '_' || g, ${id}, d, g, 'update', 5, 'routine', '{}'::jsonb, 'accepted', now()
        FROM unnest(${[iphone.id, pixel.id]}::text[]) AS d, generate_series(2, ${SENT_PER_DEVICE + 1}) AS g`
      // The other iPhone has no update token yet: its first update (40 s ago) was superseded by a milestone still queued.
      yield* sql`
        INSERT INTO live_activity_operations (id, activity_id, device_id, seq, op, priority, priority_reason, payload, status, created_at)
        VALUES (${`${id}_w_1`}, ${id}, ${waiting.id}, ${SENT_PER_DEVICE + 2}, 'update', 5, 'routine', '{}'::jsonb, 'superseded', now() - interval '40 seconds'),
               (${`${id}_w_2`}, ${id}, ${waiting.id}, ${SENT_PER_DEVICE + 3}, 'update', 10, 'milestone', '{}'::jsonb, 'queued', now())`
      yield* sql`ANALYZE live_activity_operations`

      const record = yield* (yield* ReadModelRepo).record(id)
      assert.deepStrictEqual(
        [record.accepted, record.failed, record.readiness.ready, record.readiness.awaitingUpdateToken, record.readiness.queuedStarts],
        [3, 0, 2, 1, 0]
      )
      assert.deepStrictEqual(record.readiness.warnings, ["update_token_delayed"], "the wait counts from the superseded update")

      const visited = yield* rowsVisited(sql, recordStatement(sql, sql`a.id = ${id}`))
      assert.isBelow(visited, 100, `rows visited with ${2 * SENT_PER_DEVICE} updates sent`)
    }))
})
