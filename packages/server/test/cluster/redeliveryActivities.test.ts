/**
 * A live activity's messages delivered twice (issue 33: effect/cluster
 * delivers at least once). A flush, an end and the expiry are each delivered
 * at once on two nodes (redeliverySupport.ts), the stored expiry again by the
 * real cluster, and an update twice with its `updateId` (a sender's retry):
 * each queued operation goes to the phone once, the end is queued once, the
 * update is applied once (one sequence, one push, one milestone spent).
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { ShardingConfig } from "effect/cluster"
import { SqlClient } from "effect/sql"
import { LiveActivityLive } from "../../src/activities/ActivityBehaviour.ts"
import { LiveActivityEntity } from "../../src/activities/ActivityProtocol.ts"
import { liveActivityMessage } from "../../src/activities/Cards.ts"
import { LifecycleRepo } from "../../src/activities/LifecycleRepo.ts"
import { Deadline } from "../../src/cluster/Deadline.ts"
import { makeId } from "../../src/lib/Ids.ts"
import { eventually } from "../../../../test/support/eventually.ts"
import { moveActivityDeadline } from "../../../../test/support/prompts.ts"
import { makeAgent, testServerLayer } from "../../../../test/support/server.ts"
import { phone, scopes, sent, start } from "../http/activitySupport.ts"
import { count, onTwoNodes, processedOnce } from "./redeliverySupport.ts"

/** The activity's operations, `op:status:attempts`, sorted. */
const operations = (activityId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ op: string; status: string; attempts: number }>`
      SELECT op, status, attempts FROM live_activity_operations WHERE activity_id = ${activityId}`).pipe(
    Effect.map((rows) => rows.map((r) => `${r.op}:${r.status}:${r.attempts}`).sort()),
    Effect.orDie
  )

/** The activity's feed entries with how each ended. */
const feedResults = (activityId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ result: string | null }>`SELECT result FROM activity_feed WHERE ref_id = ${activityId}`).pipe(
    Effect.map((rows) => rows.map((r) => r.result)),
    Effect.orDie
  )

// Unpaced, so every push that may go goes at once.
const unpaced = { HERALD_ACTIVITY_UPDATE_INTERVAL_MS: "0", HERALD_ACTIVITY_START_INTERVAL_MS: "0" }

layer(Layer.merge(testServerLayer(unpaced), ShardingConfig.layer()), { excludeTestServices: true, timeout: "60 seconds" })(
  "a live activity's messages delivered twice",
  (it) => {
    it.effect("an update delivered twice with its updateId is applied once: one sequence, one push, one milestone", () =>
      Effect.gen(function*() {
        const agent = yield* makeAgent([...scopes])
        const pixel = yield* phone(agent, "android")
        const { activity } = yield* start(agent, { props: { title: "Build" } })
        yield* eventually(sent(agent, pixel.id), (s) => s.length === 1)
        const actor = (yield* LiveActivityEntity.client)(activity.id)

        const halfway = { props: { status: "halfway" }, priority: "high" as const, updateId: "upd-halfway" }
        const first = yield* actor.Update(halfway)
        assert.deepStrictEqual([first.sequence, first.priorityReason, first.accepted], [2, "milestone", 1])
        assert.deepStrictEqual(yield* actor.Update(halfway), first)
        // Twice at once: the actor takes them one after the other, the second finds the first applied.
        const almost = { props: { status: "almost" }, priority: "high" as const, updateId: "upd-almost" }
        const both = yield* Effect.all([actor.Update(almost), actor.Update(almost)], { concurrency: 2 })
        assert.deepStrictEqual([both[0].sequence, both[1]], [3, both[0]])

        const read = yield* agent.client.activities.get({ params: { identifier: activity.id } })
        assert.deepStrictEqual([read.sequence, { ...read.props }], [3, { title: "Build", status: "almost" }])
        assert.deepStrictEqual(yield* operations(activity.id), ["start:accepted:1", "update:accepted:1", "update:accepted:1"])
        const shown = yield* eventually(sent(agent, pixel.id), (s) => s.length === 3)
        assert.deepStrictEqual(shown.map((s) => [s.event, s.state.status ?? null]), [["start", null], ["update", "halfway"], ["update", "almost"]])
        const grants = yield* count((sql) => sql`SELECT cardinality(milestone_grants)::int AS n FROM live_activities WHERE id = ${activity.id}`)
        assert.strictEqual(grants, 2, "two milestones spent of the minute's four")
      }))

    it.effect("a flush on two nodes at once sends each queued operation once", () =>
      Effect.gen(function*() {
        const agent = yield* makeAgent([...scopes])
        const pixels = [yield* phone(agent, "android"), yield* phone(agent, "android")]
        // Two starts queued and not yet sent (as a start left by a restart is).
        const lifecycle = yield* LifecycleRepo
        const id = yield* makeId("act")
        const state = { title: "Queued" }
        const message = liveActivityMessage({ activityId: id, event: "start", state, priority: 10, timestampSeconds: Math.floor(Date.now() / 1000) })
        const activity = { id, userId: agent.person.id, tokenId: agent.token.id, key: null, interactionId: null, props: state }
        yield* lifecycle.transaction(lifecycle.start(
          { ...activity, expiresAt: new Date(Date.now() + 3_600_000).toISOString() },
          pixels.map((p) => p.id),
          "start",
          () => message
        )).pipe(Effect.orDie)

        const [first, second] = yield* onTwoNodes(LiveActivityEntity, LiveActivityLive, id)
        yield* Effect.all([first.Flush(), second.Flush()], { concurrency: 2, discard: true })
        assert.deepStrictEqual(yield* operations(id), ["start:accepted:1", "start:accepted:1"])
        for (const pixel of pixels) {
          assert.deepStrictEqual((yield* sent(agent, pixel.id)).map((s) => s.event), ["start"])
        }
      }))

    it.effect("an end on two nodes at once ends it once: one end queued and sent, the other answers ACTIVITY_ENDED", () =>
      Effect.gen(function*() {
        const agent = yield* makeAgent([...scopes])
        const pixel = yield* phone(agent, "android")
        const { activity } = yield* start(agent, { props: { title: "Deploy" } })
        yield* eventually(sent(agent, pixel.id), (s) => s.length === 1)
        const [first, second] = yield* onTwoNodes(LiveActivityEntity, LiveActivityLive, activity.id)

        const results = yield* Effect.all([first.End(), second.End()], { concurrency: 2, mode: "result" })
        const taken = results.flatMap((r) => r._tag === "Success" ? [r.success.sequence] : [])
        const refused = results.flatMap((r) => r._tag === "Failure" ? [r.failure._tag] : [])
        assert.deepStrictEqual([taken, refused], [[2], ["ActivityEnded"]])

        assert.strictEqual((yield* agent.client.activities.get({ params: { identifier: activity.id } })).status, "ended")
        assert.deepStrictEqual(yield* operations(activity.id), ["end:accepted:1", "start:accepted:1"])
        assert.deepStrictEqual((yield* eventually(sent(agent, pixel.id), (s) => s.length === 2)).map((s) => s.event), ["start", "end"])
        assert.deepStrictEqual(yield* feedResults(activity.id), ["ended"])
      }))

    it.effect("its expiry on two nodes at once, and its stored expiry after it, expire it once", () =>
      Effect.gen(function*() {
        const agent = yield* makeAgent([...scopes])
        const iphone = yield* phone(agent, "ios")
        const { activity } = yield* start(agent, { props: { title: "Backup" } })
        // An update waiting for the phone's update token: queued until the expiry drops it.
        assert.strictEqual((yield* agent.client.activities.update({ params: { identifier: activity.id }, payload: { props: { status: "copying" } } })).queued, 1)
        const [first, second] = yield* onTwoNodes(LiveActivityEntity, LiveActivityLive, activity.id)

        yield* Effect.all([first.Expire(Deadline.at(Date.now())), second.Expire(Deadline.at(Date.now()))], { concurrency: 2, discard: true })
        const expired = yield* agent.client.activities.get({ params: { identifier: activity.id } })
        assert.deepStrictEqual([expired.status, expired.readiness.awaitingUpdateToken], ["expired", 0])
        assert.deepStrictEqual(yield* operations(activity.id), ["start:accepted:1", "update:expired:0"])
        assert.deepStrictEqual(yield* feedResults(activity.id), ["expired"])

        // The stored timer comes due later: the activity is final, nothing changes.
        yield* moveActivityDeadline(activity.id, Date.now())
        yield* processedOnce({ entityType: "LiveActivity", entityId: activity.id, tag: "Expire" })
        const after = yield* agent.client.activities.get({ params: { identifier: activity.id } })
        assert.deepStrictEqual([after.status, after.updatedAt, after.endedAt], ["expired", expired.updatedAt, expired.endedAt])
        assert.deepStrictEqual(yield* operations(activity.id), ["start:accepted:1", "update:expired:0"])
        assert.deepStrictEqual((yield* sent(agent, iphone.id)).map((s) => s.event), ["start"])
      }))
  }
)
