/**
 * How live activities end, fail and are replaced, over HTTP with the sandbox
 * provider: an end leaves nothing queued for a device that never got the
 * card; a start or update token that fails for good fails its device (place
 * freed, queue dropped); failed is final; a replacing start is all or
 * nothing, and never loses a race to 409; an accepted update can always be
 * ended within APNs' 4 KB.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { endMessage, liveActivityMessage } from "../../src/activities/Cards.ts"
import { payloadBytes } from "../../src/push/PushMessage.ts"
import { eventually } from "../../../../test/support/eventually.ts"
import { makeAgent, rawFetch, testServerLayer } from "../../../../test/support/server.ts"
import { phone, scopes, sent, start } from "./activitySupport.ts"
import type { Agent } from "./activitySupport.ts"

/** The activity's operations still to send. */
const pending = (activityId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql<{ op: string; status: string }>`
      SELECT op, status FROM live_activity_operations WHERE activity_id = ${activityId} AND status IN ('queued', 'sending')`
  })

/** The update-token wait as the activity's readiness reports it, after its operations waited 31 s. */
const waitAfter31s = (agent: Agent, activityId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`UPDATE live_activity_operations SET created_at = now() - interval '31 seconds' WHERE activity_id = ${activityId}`
    const { readiness } = yield* agent.client.activities.get({ params: { identifier: activityId } })
    return [readiness.awaitingUpdateToken, readiness.warnings] as const
  })

const milestone = (agent: Agent, identifier: string, status: string) =>
  agent.client.activities.update({ params: { identifier }, payload: { props: { status }, priority: "high" } })

layer(testServerLayer({ HERALD_ACTIVITY_UPDATE_INTERVAL_MS: "400", HERALD_ACTIVITY_START_INTERVAL_MS: "0" }), {
  excludeTestServices: true,
  timeout: "60 seconds"
})("live activity lifecycle", (it) => {
  it.effect("an end sends nothing more to a device whose start never went: its queued milestone is dropped, no end", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      // Starts that the provider keeps refusing for now: they stay queued.
      const pixel = yield* phone(agent, "android", { pushToken: `unavailable-la-${Date.now()}` })
      const iphone = yield* phone(agent, "ios", { pushToStart: `unavailable-pts-${Date.now()}` })
      const { activity } = yield* start(agent, { props: { title: "Deploy" }, deviceIds: [pixel.id, iphone.id] })
      assert.strictEqual(activity.readiness.queuedStarts, 2)
      assert.strictEqual((yield* milestone(agent, activity.id, "halfway")).queued, 2)
      const ended = yield* agent.client.activities.end({ params: { identifier: activity.id } })
      assert.deepStrictEqual([ended.accepted, ended.failed, ended.queued], [0, 0, 0])
      assert.strictEqual(ended.activity.status, "ended")
      assert.deepStrictEqual(yield* pending(activity.id), [])
      assert.deepStrictEqual(yield* waitAfter31s(agent, activity.id), [0, []])
    }))

  it.effect("a device whose start fails for good after a milestone was queued gets nothing more and no update-token wait", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      const iphone = yield* phone(agent, "ios", { pushToStart: `unavailable-pts-${Date.now()}` })
      const { activity } = yield* start(agent, { props: { title: "Backup" } })
      assert.strictEqual((yield* milestone(agent, activity.id, "halfway")).queued, 1)
      // The push-to-start token dies: the start's next retry is refused for good.
      yield* agent.app.devices.pushToStartToken({ params: { id: iphone.id }, payload: { token: `unregistered-pts-${Date.now()}` } })
      const failed = yield* eventually(
        agent.client.activities.get({ params: { identifier: activity.id } }),
        (a) => a.status === "failed"
      )
      assert.strictEqual(failed.failed, 1)
      assert.deepStrictEqual(yield* pending(activity.id), [])
      assert.deepStrictEqual(yield* waitAfter31s(agent, activity.id), [0, []])
    }))

  it.effect("a device that shows the card still gets its queued milestone, then the end", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      const iphone = yield* phone(agent, "ios")
      const { activity } = yield* start(agent, { props: { title: "Sync" } })
      yield* milestone(agent, activity.id, "halfway")
      const ended = yield* agent.client.activities.end({ params: { identifier: activity.id } })
      assert.deepStrictEqual([ended.accepted, ended.queued, ended.superseded], [0, 1, 0])
      yield* agent.app.activities.updateToken({ params: { id: activity.id }, payload: { deviceId: iphone.id, token: `upd-${Date.now()}` } })
      const deliveries = yield* eventually(sent(agent, iphone.id), (s) => s.length === 3)
      assert.deepStrictEqual(deliveries.map((s) => [s.event, s.state.status ?? null]), [["start", null], ["update", "halfway"], ["end", "halfway"]])
    }))

  it.effect("an end's superseded counts only unsent routine updates, never a dropped start", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      const flaky = yield* phone(agent, "android", { pushToken: `unavailable-la-${Date.now()}` })
      const unstarted = yield* start(agent, { props: { title: "Queued" }, deviceIds: [flaky.id] })
      const ended = yield* agent.client.activities.end({ params: { identifier: unstarted.activity.id } })
      assert.strictEqual(ended.superseded, 0)

      const pixel = yield* phone(agent, "android")
      const { activity } = yield* start(agent, { props: { title: "Copy", progress: 0 }, deviceIds: [pixel.id] })
      const update = (progress: number) => agent.client.activities.update({ params: { identifier: activity.id }, payload: { props: { progress } } })
      yield* update(0.1)
      assert.strictEqual((yield* update(0.2)).queued, 1, "paced: the second routine update waits")
      const endedRoutine = yield* agent.client.activities.end({ params: { identifier: activity.id } })
      assert.strictEqual(endedRoutine.superseded, 1)
    }))

  it.effect("failed is final: ending a failed activity answers ACTIVITY_ENDED and it stays failed", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      const gone = yield* phone(agent, "android", { pushToken: `unregistered-la-${Date.now()}` })
      const { activity } = yield* start(agent, { props: { title: "a" }, deviceIds: [gone.id] })
      assert.strictEqual(activity.status, "failed")
      const refused = yield* Effect.flip(agent.client.activities.end({ params: { identifier: activity.id } }))
      assert.strictEqual(refused._tag, "ActivityEnded")
      const read = yield* agent.client.activities.get({ params: { identifier: activity.id } })
      assert.deepStrictEqual([read.status, read.endedAt], ["failed", null])
    }))

  it.effect("an update token refused for good fails that device: counted in failed, status partial, its place freed", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      const iphone = yield* phone(agent, "ios")
      yield* phone(agent, "android")
      const { activity } = yield* start(agent, { props: { title: "Build" } })
      assert.strictEqual(activity.accepted, 2)
      yield* agent.app.activities.updateToken({
        params: { id: activity.id },
        payload: { deviceId: iphone.id, token: `unregistered-upd-${Date.now()}` }
      })
      const update = yield* milestone(agent, activity.id, "compiling")
      assert.deepStrictEqual([update.accepted, update.failed], [1, 1])
      assert.deepStrictEqual([update.activity.status, update.activity.failed], ["partial", 1])
      // Its place on the iPhone is free: five more fit there.
      for (let n = 0; n < 5; n++) {
        assert.strictEqual((yield* start(agent, { props: { title: `job ${n}` }, deviceIds: [iphone.id] })).activity.status, "active")
      }
    }))

  it.effect("a replacing start that fails leaves the old activity as it was; replacing on a full device works", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      const home = yield* phone(agent, "android")
      const full = yield* phone(agent, "android")
      const old = yield* start(agent, { key: "k", props: { title: "Old" }, deviceIds: [home.id] })
      for (let n = 0; n < 5; n++) yield* start(agent, { props: { title: `filler ${n}` }, deviceIds: [full.id] })
      const untouched = Effect.gen(function*() {
        const read = yield* agent.client.activities.get({ params: { identifier: "k" } })
        assert.deepStrictEqual([read.id, read.status], [old.activity.id, "active"])
        assert.deepStrictEqual((yield* sent(agent, home.id)).map((s) => s.event), ["start"])
      })

      const noRoom = yield* Effect.flip(start(agent, { key: "k", props: { title: "New" }, replace: true, deviceIds: [full.id] }))
      assert.strictEqual(noRoom._tag, "ActivityCapacityExceeded")
      yield* untouched
      const tooBig = yield* Effect.flip(start(agent, { key: "k", props: { title: "New", notes: "x".repeat(5000) }, replace: true }))
      assert.strictEqual(tooBig._tag, "ActivityPayloadTooLarge")
      yield* untouched

      // The old activity's own place counts as free for its replacement.
      for (let n = 0; n < 4; n++) yield* start(agent, { props: { title: `more ${n}` }, deviceIds: [home.id] })
      const replaced = yield* start(agent, { key: "k", props: { title: "New" }, replace: true, deviceIds: [home.id] })
      assert.deepStrictEqual([replaced.replaced, replaced.activity.status], [1, "active"])
      assert.strictEqual((yield* agent.client.activities.get({ params: { identifier: old.activity.id } })).status, "ended")
      assert.deepStrictEqual((yield* sent(agent, home.id)).map((s) => s.event).slice(-2), ["end", "start"])
    }))

  it.effect("concurrent replacing starts of one key all succeed, one after another; exactly one stays live", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      yield* phone(agent, "android")
      yield* start(agent, { key: "race", props: { title: "first" } })
      const results = yield* Effect.forEach(
        Array.from({ length: 8 }, (_, n) => n),
        (n) => start(agent, { key: "race", props: { title: `racer ${n}` }, replace: true }),
        { concurrency: "unbounded" }
      )
      assert.isTrue(results.every((r) => r.replaced === 1))
      const live = (yield* agent.client.activities.list()).items.filter((a) => a.key === "race" && a.status === "active")
      assert.strictEqual(live.length, 1)
    }))

  it.effect("an update whose end would pass 4 KB is refused; the largest accepted one reaches the phone and can still be ended", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      const pixel = yield* phone(agent, "android")
      const { activity } = yield* start(agent, { props: { title: "t" } })
      // Sizes depend on digit counts only: any ten-digit times give the server's sizes.
      const state = (notes: string) => ({ title: "t", notes })
      const updateBytes = (notes: string) =>
        payloadBytes(liveActivityMessage({
          activityId: activity.id,
          event: "update",
          state: state(notes),
          priority: 5,
          timestampSeconds: 1_700_000_000,
          staleDate: 1_700_000_000
        }))
      const endBytes = (notes: string) => payloadBytes(endMessage(activity.id, state(notes), 1_700_000_000))
      // The most an update may carry: neither it nor its end past 4 KB, on APNs or FCM.
      const bytes = (notes: string) => Math.max(updateBytes(notes), endBytes(notes))
      const fill = 4096 - bytes("")
      assert.deepStrictEqual([bytes("x".repeat(fill)), bytes("x".repeat(fill + 1))], [4096, 4097])

      const update = (notes: string) => agent.client.activities.update({ params: { identifier: activity.id }, payload: { props: { notes } } })
      const refused = yield* Effect.flip(update("x".repeat(fill + 1)))
      assert.deepStrictEqual([refused._tag, refused._tag === "ActivityPayloadTooLarge" ? refused.limit : 0], ["ActivityPayloadTooLarge", 4096])
      yield* update("x".repeat(fill))
      const ended = yield* agent.client.activities.end({ params: { identifier: activity.id } })
      assert.strictEqual(ended.activity.status, "ended")
      // The sandbox refuses what a provider would: the phone got the largest update and the end.
      const events = yield* eventually(sent(agent, pixel.id), (s) => s.length === 3)
      assert.deepStrictEqual(events.map((e) => [e.event, String(e.state.notes ?? "").length]), [["start", 0], ["update", fill], ["end", fill]])
    }))

  it.effect("named deviceIds still leave out devices that cannot show a card; none left is 422 NO_LIVE_ACTIVITY_DEVICE", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      const pixel = yield* phone(agent, "android")
      const plain = yield* agent.app.devices.register({ payload: { platform: "android", pushToken: `plain-la-${Date.now()}` } })
      const started = yield* start(agent, { props: { title: "Both named" }, deviceIds: [pixel.id, plain.id] })
      assert.strictEqual(started.accepted, 1)
      assert.deepStrictEqual((yield* agent.app.devices.deliveries({ params: { id: plain.id } })).items, [])
      const refused = yield* Effect.flip(start(agent, { props: { title: "Only the plain one" }, deviceIds: [plain.id] }))
      assert.strictEqual(refused._tag, "NoLiveActivityDevice")
    }))

  it.effect("a start a dead process was sending counts as shown: the activity leaves starting and its end goes out", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      const pixel = yield* phone(agent, "android")
      const { activity } = yield* start(agent, { props: { title: "Migrate" } })
      yield* eventually(sent(agent, pixel.id), (s) => s.length === 1)
      // The start's answer recorded too (it lands after the phone has the push): rewritten before that, its
      // late write would undo the crash staged below.
      yield* eventually(pending(activity.id), (rows) => rows.length === 0)
      // As a crash leaves it: the start claimed by a node that never heartbeated, ten minutes ago, its answer never recorded.
      // One transaction, so the sweep never sees half of it.
      const sql = yield* SqlClient.SqlClient
      yield* sql.withTransaction(Effect.gen(function*() {
        yield* sql`UPDATE live_activity_operations SET status = 'sending', claimed_by = 'node-that-died',
                     claimed_at = now() - interval '10 minutes' WHERE activity_id = ${activity.id} AND op = 'start'`
        yield* sql`UPDATE live_activity_targets SET status = 'queued' WHERE activity_id = ${activity.id}`
        yield* sql`UPDATE live_activities SET status = 'starting' WHERE id = ${activity.id}`
      }))

      const shown = yield* eventually(agent.client.activities.get({ params: { identifier: activity.id } }), (a) => a.status !== "starting")
      assert.strictEqual(shown.status, "active")
      const ended = yield* agent.client.activities.end({ params: { identifier: activity.id } })
      assert.strictEqual(ended.activity.status, "ended")
      const events = yield* eventually(sent(agent, pixel.id), (s) => s.length === 2)
      assert.deepStrictEqual(events.map((e) => e.event), ["start", "end"])
    }))
})

// One start per device every 3 s.
layer(testServerLayer({ HERALD_ACTIVITY_START_INTERVAL_MS: "3000" }), { excludeTestServices: true, timeout: "60 seconds" })(
  "paced starts",
  (it) => {
    it.effect("a paced start's readiness.nextStartAt is when it will go, not when it was queued", () =>
      Effect.gen(function*() {
        const agent = yield* makeAgent([...scopes])
        const pixel = yield* phone(agent, "android")
        const first = yield* start(agent, { props: { title: "First" } })
        assert.strictEqual(first.accepted, 1)
        const before = Date.now()
        const second = yield* start(agent, { props: { title: "Second" } })
        assert.strictEqual(second.activity.readiness.queuedStarts, 1)
        const at = Date.parse(second.activity.readiness.nextStartAt ?? "")
        assert.isAbove(at, before + 1000, second.activity.readiness.nextStartAt ?? "null")
        assert.isAtMost(at, before + 3500)
        yield* eventually(sent(agent, pixel.id), (s) => s.length === 2)
        assert.isAtLeast(Date.now(), at - 100)
      }))
  }
)

// Rate limits off: the race needs many requests at once.
layer(
  testServerLayer({ HERALD_ACTIVITY_START_INTERVAL_MS: "0", HERALD_RATE_LIMIT_PER_MINUTE: "0", HERALD_SEND_LIMIT_PER_MINUTE: "0" }),
  { excludeTestServices: true, timeout: "90 seconds" }
)("replace under load", (it) => {
  it.effect("a replacing start racing updates and an end of the activity it replaces never deadlocks", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      yield* phone(agent, "android")
      yield* phone(agent, "android")
      const call = (method: string, path: string, body?: unknown) =>
        Effect.map(
          rawFetch(`/api/agent${path}`, {
            method,
            headers: { authorization: `Bearer ${agent.secret}`, "content-type": "application/json" },
            ...(body === undefined ? {} : { body: JSON.stringify(body) })
          }),
          (r) => r.status
        )
      yield* start(agent, { key: "race", props: { title: "r" } })
      const statuses: Array<number> = []
      for (let round = 0; round < 40; round++) {
        statuses.push(...yield* Effect.all([
          ...Array.from({ length: 3 }, (_, i) => call("PATCH", "/activities/race", { props: { detail: `${round}-${i}` } })),
          call("POST", "/activities/race/end"),
          call("POST", "/activities", { key: "race", replace: true, props: { title: `r${round}` } })
        ], { concurrency: "unbounded" }))
      }
      assert.deepStrictEqual([...new Set(statuses)].filter((s) => s >= 500), [])
    }))
})
