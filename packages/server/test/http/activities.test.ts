/**
 * Live activities over HTTP with the typed client and the sandbox provider:
 * starts (push-to-start on iOS, FCM data on Android), keys and replacement,
 * capacity under concurrent starts, routine pacing and superseding,
 * milestones and their budget, update tokens arriving late, ending before a
 * token exists, a claim left by a dead process, payload and text budgets, and
 * the end of the logical activity.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { eventually } from "../../../../test/support/eventually.ts"
import { moveActivityDeadline } from "../../../../test/support/prompts.ts"
import { makeAgent, rawFetch, testServerLayer } from "../../../../test/support/server.ts"
import { phone, scopes, sent, start } from "./activitySupport.ts"

// Routine updates: one per device per 400 ms, so pacing shows without slow tests.
layer(testServerLayer({ HERALD_ACTIVITY_UPDATE_INTERVAL_MS: "400", HERALD_ACTIVITY_START_INTERVAL_MS: "0" }), {
  excludeTestServices: true,
  timeout: "60 seconds"
})("live activities", (it) => {
  it.effect("starts on every capable device: push-to-start on iOS, a data message on Android", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      const iphone = yield* phone(agent, "ios")
      const pixel = yield* phone(agent, "android")
      yield* agent.app.devices.register({ payload: { platform: "ios", pushToken: `plain-${Date.now()}` } })
      const started = yield* start(agent, { key: "deploy-42", props: { title: "Deploying v2", progress: 0.1, layout: "ring" } })
      assert.strictEqual(started.accepted, 2)
      assert.strictEqual(started.failed, 0)
      assert.strictEqual(started.queued, 0)
      assert.strictEqual(started.apnsPriority, 10)
      assert.strictEqual(started.priorityReason, "start")
      assert.strictEqual(started.activity.status, "active")
      assert.strictEqual(started.activity.key, "deploy-42")
      assert.strictEqual(started.activity.sequence, 1)
      assert.strictEqual(started.activity.accepted, 2)
      assert.deepStrictEqual(started.activity.readiness.warnings, [])
      assert.deepStrictEqual(yield* sent(agent, iphone.id), [{ event: "start", priority: 10, state: { title: "Deploying v2", progress: 0.1, layout: "ring" } }])
      assert.deepStrictEqual((yield* sent(agent, pixel.id)).map((s) => s.event), ["start"])
      const byKey = yield* agent.client.activities.get({ params: { identifier: "deploy-42" } })
      assert.strictEqual(byKey.id, started.activity.id)
      assert.deepStrictEqual((yield* agent.client.activities.list()).items.map((a) => a.id), [started.activity.id])
    }))

  it.effect("a live key conflicts unless replace, which ends the old activity; other tokens see nothing", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      yield* phone(agent, "android")
      const first = yield* start(agent, { key: "build", props: { title: "Build 1" } })
      const conflict = yield* Effect.flip(start(agent, { key: "build", props: { title: "Build 2" } }))
      assert.strictEqual(conflict._tag, "ActivityKeyConflict")
      const second = yield* start(agent, { key: "build", props: { title: "Build 2" }, replace: true })
      assert.strictEqual(second.replaced, 1)
      assert.strictEqual((yield* agent.client.activities.get({ params: { identifier: first.activity.id } })).status, "ended")
      assert.strictEqual((yield* agent.client.activities.get({ params: { identifier: "build" } })).id, second.activity.id)
      // Concurrent starts of one new key: one wins, the others conflict.
      const racing = yield* Effect.forEach(
        [1, 2, 3, 4, 5],
        (n) => Effect.result(start(agent, { key: "race", props: { title: `racer ${n}` } })),
        { concurrency: "unbounded" }
      )
      assert.strictEqual(racing.filter((r) => r._tag === "Success").length, 1)
      assert.isTrue(racing.every((r) => r._tag === "Success" || r.failure._tag === "ActivityKeyConflict"))
      // Another key is untouched by replace.
      const other = yield* start(agent, { key: "tests", props: { title: "Tests" }, replace: true })
      assert.strictEqual(other.replaced, 0)
      const stranger = yield* makeAgent([...scopes])
      assert.strictEqual((yield* Effect.flip(stranger.client.activities.get({ params: { identifier: "build" } })))._tag, "NotFound")
      assert.strictEqual(
        (yield* Effect.flip(stranger.client.activities.update({ params: { identifier: second.activity.id }, payload: {} })))._tag,
        "NotFound"
      )
    }))

  it.effect("capacity: of ten parallel starts to one device exactly five succeed; a full device counts as failed", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      const crowded = yield* phone(agent, "android")
      const results = yield* Effect.forEach(
        Array.from({ length: 10 }, (_, n) => n),
        (n) => Effect.result(start(agent, { props: { title: `job ${n}` } })),
        { concurrency: "unbounded" }
      )
      assert.strictEqual(results.filter((r) => r._tag === "Success").length, 5)
      for (const r of results) {
        if (r._tag === "Failure") {
          assert.strictEqual(r.failure._tag === "ActivityCapacityExceeded" ? r.failure.limit : r.failure._tag, 5)
        }
      }
      const roomy = yield* phone(agent, "android")
      const partial = yield* start(agent, { props: { title: "both" }, deviceIds: [crowded.id, roomy.id] })
      assert.strictEqual(partial.accepted, 1)
      assert.strictEqual(partial.failed, 1)
      assert.strictEqual(partial.activity.status, "partial")
      const none = yield* makeAgent([...scopes])
      assert.strictEqual((yield* Effect.flip(start(none, { props: { title: "x" } })))._tag, "NoLiveActivityDevice")
      assert.strictEqual((yield* Effect.flip(start(none, { props: { title: "x" }, deviceIds: [roomy.id] })))._tag, "NotFound")
    }))

  it.effect("routine updates are paced per device; an unsent one is superseded by a newer one, never counted as accepted", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      const pixel = yield* phone(agent, "android")
      const { activity } = yield* start(agent, { key: "p", props: { title: "Copying", progress: 0 } })
      const update = (progress: number) => agent.client.activities.update({ params: { identifier: "p" }, payload: { props: { progress } } })
      const u1 = yield* update(0.2)
      assert.deepStrictEqual([u1.accepted, u1.queued, u1.apnsPriority, u1.priorityReason], [1, 0, 5, "routine"])
      const u2 = yield* update(0.4)
      assert.deepStrictEqual([u2.accepted, u2.queued, u2.superseded], [0, 1, 0])
      const u3 = yield* update(0.6)
      assert.deepStrictEqual([u3.accepted, u3.queued, u3.superseded], [0, 1, 1])
      // The newer snapshot took the older one's place: the stored queue does not grow with the updates.
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ status: string }>`
        SELECT status FROM live_activity_operations WHERE activity_id = ${activity.id} AND op = 'update' ORDER BY seq`
      assert.strictEqual(rows.length, 2)
      assert.isFalse(rows.some((r) => r.status === "superseded"))
      const deliveries = yield* eventually(sent(agent, pixel.id), (s) => s.length === 3)
      assert.deepStrictEqual(deliveries.map((s) => [s.event, s.state.progress]), [["start", 0], ["update", 0.2], ["update", 0.6]])
      // Ready again once the last answer is recorded (just after the sandbox has the push).
      const after = yield* eventually(agent.client.activities.get({ params: { identifier: activity.id } }), (a) => a.readiness.ready === 1)
      assert.strictEqual(after.sequence, 4)
    }))

  it.effect("milestones go at once at priority 10, never superseded; past the budget they fall back to priority 5", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      const pixel = yield* phone(agent, "android")
      yield* start(agent, { key: "m", props: { title: "Migrating" } })
      const update = (status: string, priority: "high" | "default") =>
        agent.client.activities.update({ params: { identifier: "m" }, payload: { props: { status }, priority } })
      yield* update("r1", "default")
      const queuedRoutine = yield* update("r2", "default")
      assert.strictEqual(queuedRoutine.queued, 1)
      const milestones = []
      for (let i = 1; i <= 5; i++) milestones.push(yield* update(`m${i}`, "high"))
      assert.deepStrictEqual(milestones.map((m) => [m.apnsPriority, m.priorityReason]), [
        [10, "milestone"], [10, "milestone"], [10, "milestone"], [10, "milestone"], [5, "budget_exhausted"]
      ])
      // The first milestone replaced the unsent routine snapshot before it and went at once.
      assert.strictEqual(milestones[0]!.superseded, 1)
      assert.strictEqual(milestones[0]!.accepted, 1)
      const deliveries = yield* eventually(sent(agent, pixel.id), (s) => s.length === 7)
      assert.deepStrictEqual(deliveries.map((s) => [s.state.status ?? null, s.priority]), [
        [null, 10], ["r1", 5], ["m1", 10], ["m2", 10], ["m3", 10], ["m4", 10], ["m5", 5]
      ])
    }))

  it.effect("iOS updates and an end wait for the update token, then go in order; the end is accepted durably at once", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      const iphone = yield* phone(agent, "ios")
      const { activity } = yield* start(agent, { key: "ios", props: { title: "Backup", progress: 0 } })
      const milestone = yield* agent.client.activities.update({
        params: { identifier: "ios" },
        payload: { props: { progress: 0.5, status: "halfway" }, priority: "high" }
      })
      assert.deepStrictEqual([milestone.accepted, milestone.queued], [0, 1])
      assert.strictEqual(milestone.activity.readiness.awaitingUpdateToken, 1)
      const ended = yield* agent.client.activities.end({ params: { identifier: "ios" } })
      assert.deepStrictEqual([ended.accepted, ended.failed, ended.queued], [0, 0, 1])
      assert.strictEqual(ended.activity.status, "ended")
      assert.isNotNull(ended.activity.endedAt)
      assert.strictEqual((yield* Effect.flip(agent.client.activities.update({ params: { identifier: "ios" }, payload: {} })))._tag, "ActivityEnded")

      // Thirty seconds without a token: the readiness warns.
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE live_activity_operations SET created_at = now() - interval '31 seconds' WHERE activity_id = ${activity.id} AND op <> 'start'`
      assert.deepStrictEqual((yield* agent.client.activities.get({ params: { identifier: activity.id } })).readiness.warnings, ["update_token_delayed"])

      yield* agent.app.activities.updateToken({ params: { id: activity.id }, payload: { deviceId: iphone.id, token: "upd-token-1" } })
      const deliveries = yield* eventually(sent(agent, iphone.id), (s) => s.length === 3)
      assert.deepStrictEqual(deliveries.map((s) => [s.event, s.priority]), [["start", 10], ["update", 10], ["end", 10]])
      assert.strictEqual(deliveries[2]!.state.status, "halfway")
      const read = yield* agent.client.activities.get({ params: { identifier: activity.id } })
      assert.deepStrictEqual([read.readiness.awaitingUpdateToken, read.readiness.warnings.length], [0, 0])
      const stranger = yield* makeAgent([...scopes])
      assert.strictEqual(
        (yield* Effect.flip(stranger.app.activities.updateToken({ params: { id: activity.id }, payload: { deviceId: iphone.id, token: "x" } })))._tag,
        "NotFound"
      )
    }))

  it.effect("provider outcomes: a permanent refusal counts as failed, a transient one stays queued and retries", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      const gone = yield* agent.app.devices.register({
        payload: { platform: "android", pushToken: `unregistered-${Date.now()}`, liveActivitiesCapable: true }
      })
      const flaky = yield* agent.app.devices.register({
        payload: { platform: "android", pushToken: `unavailable-${Date.now()}`, liveActivitiesCapable: true }
      })
      const onGone = yield* start(agent, { props: { title: "a" }, deviceIds: [gone.id] })
      assert.deepStrictEqual([onGone.accepted, onGone.failed, onGone.queued, onGone.activity.status], [0, 1, 0, "failed"])
      const onFlaky = yield* start(agent, { props: { title: "b" }, deviceIds: [flaky.id] })
      assert.deepStrictEqual([onFlaky.accepted, onFlaky.failed, onFlaky.queued, onFlaky.activity.status], [0, 0, 1, "starting"])
      assert.strictEqual(onFlaky.activity.readiness.queuedStarts, 1)
      assert.isNotNull(onFlaky.activity.readiness.nextStartAt)
      const sql = yield* SqlClient.SqlClient
      const [op] = yield* eventually(
        sql<{ attempts: number; status: string }>`SELECT attempts, status FROM live_activity_operations WHERE activity_id = ${onFlaky.activity.id}`,
        (rows) => (rows[0]?.attempts ?? 0) >= 2
      )
      assert.strictEqual(op?.status === "queued" || op?.status === "sending", true)
    }))

  it.effect("an operation a dead process was sending becomes unknown, never resent, and its device's queue moves on", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      const iphone = yield* phone(agent, "ios")
      const { activity } = yield* start(agent, { key: "crash", props: { title: "Sync", progress: 0 } })
      const update = (progress: number) =>
        agent.client.activities.update({ params: { identifier: "crash" }, payload: { props: { progress }, priority: "high" } })
      const first = yield* update(0.3)
      // A process claimed the first update and died before recording the provider's answer: its
      // node never heartbeated and the claim is ten minutes old.
      const sql = yield* SqlClient.SqlClient
      const claimed = yield* sql`
        UPDATE live_activity_operations SET status = 'sending', claimed_by = 'node-that-died', claimed_at = now() - interval '10 minutes'
        WHERE activity_id = ${activity.id} AND seq = ${first.activity.sequence} AND status = 'queued' RETURNING 1`
      assert.strictEqual(claimed.length, 1)
      yield* update(0.6)
      yield* agent.app.activities.updateToken({ params: { id: activity.id }, payload: { deviceId: iphone.id, token: "upd-crash" } })
      const deliveries = yield* eventually(sent(agent, iphone.id), (s) => s.length === 2)
      assert.deepStrictEqual(deliveries.map((s) => [s.event, s.state.progress]), [["start", 0], ["update", 0.6]])
      // The provider's answer is recorded just after the sandbox has the push.
      const ops = yield* eventually(
        sql<{ seq: number; status: string }>`
          SELECT seq, status FROM live_activity_operations WHERE activity_id = ${activity.id} AND op = 'update' ORDER BY seq`,
        (rows) => rows[1]?.status !== "sending"
      )
      assert.deepStrictEqual(ops.map((o) => o.status), ["unknown", "accepted"])
    }))

  it.effect("at its deadline an activity expires: queued operations are dropped and its devices freed", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      yield* phone(agent, "ios")
      const { activity } = yield* start(agent, { props: { title: "Nightly" }, expiresInSeconds: 60 })
      yield* agent.client.activities.update({ params: { identifier: activity.id }, payload: { props: { progress: 0.5 } } })
      const deadline = Date.now() + 500
      yield* moveActivityDeadline(activity.id, deadline)
      const expired = yield* eventually(
        agent.client.activities.get({ params: { identifier: activity.id } }),
        (a) => a.status === "expired"
      )
      assert.isBelow(Date.now() - deadline, 1500)
      assert.strictEqual(expired.readiness.awaitingUpdateToken, 0)
      const sql = yield* SqlClient.SqlClient
      const ops = yield* sql<{ op: string; status: string }>`SELECT op, status FROM live_activity_operations WHERE activity_id = ${activity.id} ORDER BY seq`
      assert.deepStrictEqual(ops.map((o) => [o.op, o.status]), [["start", "accepted"], ["update", "expired"]])
      assert.strictEqual((yield* Effect.flip(agent.client.activities.end({ params: { identifier: activity.id } })))._tag, "ActivityEnded")
    }))

  it.effect("props: merged field by field (null removes), validated, size-checked; long text warns, never truncated", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      yield* phone(agent, "android")
      const long = "A very long deployment title that will not fit"
      const started = yield* start(agent, { key: "v", props: { title: long, status: "ok", owner: "ops" } })
      assert.deepStrictEqual(started.budgetWarnings?.map((w) => [w.field, w.layout, w.length, w.budget]), [["title", "standard", long.length, 32]])
      assert.strictEqual(started.activity.props.title, long)
      const merged = yield* agent.client.activities.update({ params: { identifier: "v" }, payload: { props: { status: null, detail: "d" } } })
      assert.deepStrictEqual({ ...merged.activity.props }, { title: long, owner: "ops", detail: "d" })

      const post = (body: unknown) =>
        rawFetch("/api/agent/activities", {
          method: "POST",
          headers: { authorization: `Bearer ${agent.secret}`, "content-type": "application/json" },
          body: JSON.stringify(body)
        })
      for (const props of [{}, { title: "" }, { title: "t", progress: 1.5 }, { title: "t", layout: "grid" }]) {
        const response = yield* post({ props })
        assert.strictEqual(response.status, 400, JSON.stringify(props))
        assert.strictEqual((response.body as { code: string }).code, "VALIDATION_FAILED")
      }
      // Free-form values nest at most 8 levels; far deeper ones are refused, not a crash of the size check.
      const nested = (levels: number) => `${'{"a":'.repeat(levels)}1${"}".repeat(levels)}`
      const deep = (where: string) =>
        rawFetch("/api/agent/activities", {
          method: "POST",
          headers: { authorization: `Bearer ${agent.secret}`, "content-type": "application/json" },
          body: `{"props":{"title":"t",${where}}}`
        })
      for (const where of [`"tree":${nested(9)}`, `"steps":[${nested(9)}]`, `"tree":${nested(6000)}`]) {
        const response = yield* deep(where)
        assert.deepStrictEqual([response.status, (response.body as { code: string }).code], [400, "VALIDATION_FAILED"], where.slice(0, 20))
      }
      const accepted = yield* post({ key: "nested", props: { title: "t", steps: [JSON.parse(nested(7))], tree: JSON.parse(nested(8)) } })
      assert.strictEqual(accepted.status, 201)

      const big = yield* post({ props: { title: "t", notes: "x".repeat(5000) } })
      assert.strictEqual(big.status, 400)
      assert.deepStrictEqual([(big.body as { code: string }).code, (big.body as { limit: number }).limit], ["ACTIVITY_PAYLOAD_TOO_LARGE", 4096])
    }))
})
