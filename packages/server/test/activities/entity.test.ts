/**
 * The live-activity actor on a controllable clock (Effect's TestClock), with
 * a real database and the sandbox provider: a routine update held back by
 * pacing goes exactly when the interval ends, and the milestone budget's
 * windows are the actor's clock, not the wall clock. And a mutation whose
 * caller goes away mid-send still finishes what it claimed.
 */
import { assert, layer } from "@effect/vitest"
import { ConfigProvider, Duration, Effect, Fiber, Latch, Layer } from "effect"
import { Entity, ShardingConfig } from "effect/cluster"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { LiveActivityLive } from "../../src/activities/ActivityBehaviour.ts"
import { LiveActivityEntity } from "../../src/activities/ActivityProtocol.ts"
import { liveActivityMessage } from "../../src/activities/Cards.ts"
import { DevicePacing } from "../../src/activities/DevicePacing.ts"
import { LifecycleRepo } from "../../src/activities/LifecycleRepo.ts"
import { ReadModelRepo } from "../../src/activities/ReadModelRepo.ts"
import { ResidentActivities } from "../../src/activities/ResidentActivities.ts"
import { ActivitiesRepos } from "../../src/activities/Repos.ts"
import { ActivityConfig } from "../../src/config/ActivityConfig.ts"
import { MigrationsLayer } from "../../src/db/Migrations.ts"
import { Identity } from "../../src/identity/Identity.ts"
import { ActivityFeed } from "../../src/inbox/ActivityFeed.ts"
import { Outbox } from "../../src/push/Outbox.ts"
import { PushGateway } from "../../src/push/PushGateway.ts"
import { TestSqlLayer } from "../../../../test/support/database.ts"
import { eventually } from "../../../../test/support/eventually.ts"

// Starts unpaced: a retried start goes as soon as its backoff ends.
const Deps = Layer.mergeAll(ActivitiesRepos, ActivityFeed.layer, Outbox.layer.pipe(Layer.provideMerge(PushGateway.layer)), Identity.layer, DevicePacing.layer, ResidentActivities.layer).pipe(
  Layer.provideMerge(ActivityConfig.layer),
  Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({ HERALD_ACTIVITY_UPDATE_INTERVAL_MS: "1000", HERALD_ACTIVITY_START_INTERVAL_MS: "0" }))),
  Layer.provideMerge(MigrationsLayer),
  Layer.provideMerge(TestSqlLayer)
)

/** Lets the actor's database work finish (real I/O) while the test clock stands still. */
const settle = TestClock.withLive(Effect.sleep(Duration.millis(300)))

const setUp = (platform: "ios" | "android" = "android", tokenPrefix = "clock-") => Effect.gen(function*() {
  yield* TestClock.setTime(Date.now())
  const identity = yield* Identity
  const person = yield* identity.createUser({ email: `clock-${Date.now()}@example.test`, name: "Clock" })
  const device = yield* identity.registerDevice(person.id, {
    platform,
    pushToken: `${tokenPrefix}${Date.now()}`,
    liveActivitiesCapable: true
  })
  if (platform === "ios") yield* identity.setPushToStartToken(person.id, device.id, `clock-pts-${Date.now()}`)
  const lifecycle = yield* LifecycleRepo
  const repo = yield* ReadModelRepo
  const sql = yield* SqlClient.SqlClient
  const id = `act_clock${Date.now()}`
  yield* sql.withTransaction(lifecycle.start(
    { id, userId: person.id, tokenId: "tok_clock", key: null, interactionId: null, props: { title: "t" }, expiresAt: new Date(Date.now() + 3_600_000).toISOString() },
    [device.id],
    "start",
    () => liveActivityMessage({ activityId: id, event: "start", state: { title: "t" }, priority: 10, timestampSeconds: 0 })
  ))
  const client = (yield* Entity.makeTestClient(LiveActivityEntity, LiveActivityLive))(id)
  const actor = yield* client
  yield* actor.Flush()
  const sent = sql<{ n: number }>`SELECT count(*)::int AS n FROM push_sandbox_deliveries WHERE device_id = ${device.id}`.pipe(
    Effect.map((rows) => rows[0]!.n)
  )
  /** The update-token wait as the activity's readiness reports it. */
  const readiness = Effect.map(repo.record(id), (a) => [a.readiness.awaitingUpdateToken, a.readiness.warnings] as const)
  return { actor, sent, id, repo, readiness }
})

// The database and the provider run on the real clock (built once, outside the tests);
// each test's actor is built inside it, on the test clock.
layer(Layer.merge(Deps, ShardingConfig.layer()), { excludeTestServices: true, timeout: "60 seconds" })("live activity actor on a controllable clock", (it) => {
  it.effect("a paced routine update goes exactly when its interval ends", () =>
    Effect.gen(function*() {
      const { actor, sent } = yield* setUp()
      assert.strictEqual(yield* sent, 1, "the start")
      const first = yield* actor.Update({ props: { progress: 0.1 }, priority: "default" })
      assert.deepStrictEqual([first.accepted, first.queued], [1, 0])
      yield* TestClock.adjust(Duration.millis(200))
      const held = yield* actor.Update({ props: { progress: 0.2 }, priority: "default" })
      assert.deepStrictEqual([held.accepted, held.queued], [0, 1])
      yield* TestClock.adjust(Duration.millis(799))
      yield* settle
      assert.strictEqual(yield* sent, 2, "one millisecond before the interval ends: still held")
      yield* TestClock.adjust(Duration.millis(1))
      assert.strictEqual(yield* TestClock.withLive(eventually(sent, (n) => n === 3)), 3, "exactly one interval after the last routine update")
    }).pipe(Effect.provide(TestClock.layer())))

  it.effect("an iOS update waiting for its update token raises the warning once it has waited 30 s, not before", () =>
    Effect.gen(function*() {
      const { actor, readiness } = yield* setUp("ios")
      const update = yield* actor.Update({ props: { progress: 0.5 }, priority: "default" })
      assert.deepStrictEqual([update.accepted, update.queued], [0, 1])
      assert.deepStrictEqual(yield* readiness, [1, []])
      yield* TestClock.adjust(Duration.millis(29_000))
      assert.deepStrictEqual(yield* readiness, [1, []])
      // The queued row's time is the database's; allow the second the set-up took.
      yield* TestClock.adjust(Duration.seconds(2))
      assert.deepStrictEqual(yield* readiness, [1, ["update_token_delayed"]])
    }).pipe(Effect.provide(TestClock.layer())))

  it.effect("the update-token wait counts from the first update that waited, not the snapshot that superseded it", () =>
    Effect.gen(function*() {
      const { actor, id, readiness } = yield* setUp("ios")
      const sql = yield* SqlClient.SqlClient
      yield* actor.Update({ props: { progress: 0.1 }, priority: "default" })
      // The first update has waited 25 s when a newer snapshot replaces it.
      yield* sql`UPDATE live_activity_operations SET created_at = created_at - interval '25 seconds'
                 WHERE activity_id = ${id} AND op = 'update'`
      const newer = yield* actor.Update({ props: { progress: 0.2 }, priority: "default" })
      assert.strictEqual(newer.superseded, 1)
      assert.deepStrictEqual(yield* readiness, [1, []])
      // 31 s after the first (a second allowed for the set-up): the warning, though the newest waited only 6 s.
      yield* TestClock.adjust(Duration.seconds(6))
      assert.deepStrictEqual(yield* readiness, [1, ["update_token_delayed"]])
    }).pipe(Effect.provide(TestClock.layer())))

  it.effect("a transient provider failure is retried when its backoff ends, on the actor's own wake-up", () =>
    Effect.gen(function*() {
      const { id, repo } = yield* setUp("android", "unavailable-")
      const sql = yield* SqlClient.SqlClient
      const attempts = sql<{ attempts: number }>`SELECT attempts FROM live_activity_operations WHERE activity_id = ${id}`.pipe(
        Effect.map((rows) => rows[0]!.attempts)
      )
      assert.strictEqual(yield* attempts, 1, "the start went once and came back")
      // The backoff (about 200 ms) passes for the database; the actor's wake-up is on the test clock.
      yield* TestClock.withLive(Effect.sleep(Duration.millis(400)))
      assert.strictEqual(yield* attempts, 1, "nothing sends on the real clock")
      yield* TestClock.adjust(Duration.seconds(1))
      // Bounded polling on the real clock while the woken actor works (the test clock stands still).
      assert.strictEqual(yield* TestClock.withLive(eventually(attempts, (n) => n >= 2)), 2, "the actor woke for it")
      assert.strictEqual((yield* repo.record(id)).readiness.queuedStarts, 1)
    }).pipe(Effect.provide(TestClock.layer())))

  it.effect("a newer snapshot takes the unsent one's place and keeps its provider backoff and attempts", () =>
    Effect.gen(function*() {
      const { actor, id } = yield* setUp()
      const sql = yield* SqlClient.SqlClient
      yield* actor.Update({ props: { progress: 0.1 }, priority: "default" })
      const paced = yield* actor.Update({ props: { progress: 0.2 }, priority: "default" })
      assert.strictEqual(paced.queued, 1)
      // As a transient provider failure leaves it: back in the queue, due in an hour, three attempts made.
      yield* sql`UPDATE live_activity_operations SET attempts = 3, next_attempt_at = now() + interval '1 hour'
                 WHERE activity_id = ${id} AND status = 'queued'`
      const newer = yield* actor.Update({ props: { progress: 0.3 }, priority: "default" })
      assert.deepStrictEqual([newer.queued, newer.superseded], [1, 1])
      const queued = yield* sql<{ attempts: number; waiting: boolean; progress: number }>`
        SELECT attempts, next_attempt_at > now() + interval '59 minutes' AS waiting,
               (payload->'apns'->'aps'->'content-state'->>'progress')::float AS progress
        FROM live_activity_operations WHERE activity_id = ${id} AND status = 'queued'`
      assert.deepStrictEqual(queued.map((r) => [r.attempts, r.waiting, r.progress]), [[3, true, 0.3]])
    }).pipe(Effect.provide(TestClock.layer())))

  it.effect("on its own node the actor is called directly, under its lock, and leaves the registry when it stops", () =>
    Effect.gen(function*() {
      const resident = yield* ResidentActivities
      const { id, repo } = yield* Effect.scoped(Effect.gen(function*() {
        const { actor, id, repo } = yield* setUp()
        const local = resident.get(id)
        assert.isDefined(local, "registered once built")
        // A direct update and one through the cluster take turns on the actor's lock: two successive sequences.
        const [direct, viaCluster] = yield* Effect.all([
          local!.update({ progress: 0.3 }, "default"),
          actor.Update({ props: { progress: 0.4 }, priority: "default" })
        ], { concurrency: "unbounded" })
        assert.deepStrictEqual([direct.sequence, viaCluster.sequence].sort(), [2, 3])
        // Only messages through the cluster are the runtime's sign of use (it stops an idle actor):
        // callers go through it again once the last one is a minute old.
        const messaged = local!.messagedAt()
        yield* TestClock.adjust(Duration.seconds(61))
        yield* local!.update({ progress: 0.5 }, "default")
        assert.strictEqual(local!.messagedAt(), messaged)
        yield* actor.Flush()
        assert.strictEqual(local!.messagedAt() - messaged, 61_000)
        return { id, repo }
      }))
      assert.isUndefined(resident.get(id), "gone with the actor")
      assert.strictEqual((yield* repo.record(id)).sequence, 4)
    }).pipe(Effect.provide(TestClock.layer())))

  it.effect("the milestone budget counts on the actor's clock", () =>
    Effect.gen(function*() {
      const { actor } = yield* setUp()
      const reasons: Array<string> = []
      for (let i = 0; i < 5; i++) {
        reasons.push((yield* actor.Update({ props: { status: `m${i}` }, priority: "high" })).priorityReason)
      }
      assert.deepStrictEqual(reasons, ["milestone", "milestone", "milestone", "milestone", "budget_exhausted"])
      yield* TestClock.adjust(Duration.seconds(59))
      assert.strictEqual((yield* actor.Update({ props: {}, priority: "high" })).priorityReason, "budget_exhausted")
      yield* TestClock.adjust(Duration.seconds(1))
      assert.strictEqual((yield* actor.Update({ props: {}, priority: "high" })).priorityReason, "milestone")
    }).pipe(Effect.provide(TestClock.layer())))
})

/** The sandbox behind a gate the test closes, to hold a send in flight. */
const gate = Latch.makeUnsafe(true)
let sendsStarted = 0
const GatedGateway = Layer.effect(PushGateway, Effect.map(PushGateway, (real) =>
  PushGateway.of({
    ...real,
    send: (target, message) =>
      Effect.sync(() => sendsStarted++).pipe(Effect.andThen(gate.await), Effect.andThen(real.send(target, message)))
  }))).pipe(Layer.provide(PushGateway.layer))

const GatedDeps = Layer.mergeAll(ActivitiesRepos, ActivityFeed.layer, Outbox.layer.pipe(Layer.provideMerge(GatedGateway)), Identity.layer, DevicePacing.layer, ResidentActivities.layer).pipe(
  Layer.provideMerge(ActivityConfig.layer),
  Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({ HERALD_ACTIVITY_UPDATE_INTERVAL_MS: "1000", HERALD_ACTIVITY_START_INTERVAL_MS: "0" }))),
  Layer.provideMerge(MigrationsLayer),
  Layer.provideMerge(TestSqlLayer)
)

layer(Layer.merge(GatedDeps, ShardingConfig.layer()), { excludeTestServices: true, timeout: "60 seconds" })("live activity actor, caller gone", (it) => {
  it.effect("an update whose caller is interrupted during the provider call still records what the provider accepted", () =>
    Effect.gen(function*() {
      const { actor, id, sent } = yield* setUp()
      assert.strictEqual(yield* sent, 1, "the start")
      yield* gate.close
      sendsStarted = 0
      const caller = yield* Effect.forkChild(actor.Update({ props: { progress: 0.5 }, priority: "default" }))
      while (sendsStarted === 0) yield* TestClock.withLive(Effect.sleep(Duration.millis(10)))
      // The caller goes away while the claimed update is at the provider.
      const interrupting = yield* Effect.forkChild(Fiber.interrupt(caller))
      yield* TestClock.withLive(Effect.sleep(Duration.millis(100)))
      yield* gate.open
      yield* Fiber.join(interrupting)
      const sql = yield* SqlClient.SqlClient
      const statuses = yield* TestClock.withLive(eventually(
        sql<{ status: string }>`SELECT status FROM live_activity_operations WHERE activity_id = ${id} AND op = 'update' ORDER BY seq`,
        (rows) => rows[0]?.status !== "sending"
      ))
      assert.deepStrictEqual(statuses.map((r) => r.status), ["accepted"], "not left claimed and unrecorded")
      assert.strictEqual(yield* sent, 2)
    }).pipe(Effect.provide(TestClock.layer())))
})
