/**
 * The sandbox provider through the gateway built from an empty configuration
 * (no APNs, no FCM credentials), on a real database.
 */
import { assert, layer } from "@effect/vitest"
import { ConfigProvider, Duration, Effect, Fiber, Layer, Logger, Metric, Option, Random, References } from "effect"
import { TestClock } from "effect/testing"
import { PushGateway, sendDuration, sendsTotal } from "../../src/push/PushGateway.ts"
import type { PushMessage, PushTarget } from "../../src/push/PushMessage.ts"
import { SandboxRepo } from "../../src/push/SandboxRepo.ts"
import { deviceActive, insertDevice, TestDatabase, uniqueId } from "./support.ts"

const logLines: Array<string> = []
// The gateway names its providers at Debug (`herald serve` prints the one start-up line).
const CaptureLogs = Layer.mergeAll(
  Logger.layer([
    Logger.make(({ message }) => {
      logLines.push((Array.isArray(message) ? message : [message]).map(String).join(" "))
    })
  ]),
  Layer.succeed(References.MinimumLogLevel, "Debug")
)

const TestLayer = Layer.mergeAll(
  PushGateway.layer.pipe(
    Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({}))),
    Layer.provide(CaptureLogs)
  ),
  SandboxRepo.layer
).pipe(Layer.provideMerge(TestDatabase))

const alert: PushMessage = {
  pushType: "alert",
  priority: 10,
  collapseId: "int_1",
  apns: { aps: { alert: { title: "Deploy?", body: "Approve the release" }, sound: "default" }, interactionId: "int_1" },
  fcm: {
    notification: { title: "Deploy?", body: "Approve the release" },
    data: { interactionId: "int_1" },
    android: { priority: "high", collapseKey: "int_1", ttlSeconds: 600 }
  }
}

const background: PushMessage = {
  pushType: "background",
  priority: 5,
  apns: { aps: { "content-available": 1 }, sync: "inbox" },
  fcm: { data: { sync: "inbox" }, android: { priority: "normal" } }
}

const target = (platform: "ios" | "android", token: string): PushTarget => ({ deviceId: uniqueId("dev"), platform, token })

/** A Random whose draws are `values` in turn (then 0.5). */
const fixedRandom = (values: ReadonlyArray<number>) => {
  let i = 0
  const next = () => values[i++] ?? 0.5
  return { nextDoubleUnsafe: next, nextIntUnsafe: () => Math.floor(next() * Number.MAX_SAFE_INTEGER) }
}

layer(TestLayer, { timeout: "60 seconds" })("sandbox provider", (it) => {
  it.effect("serves both platforms and says so in one start-up line", () =>
    Effect.gen(function*() {
      const gateway = yield* PushGateway
      assert.deepStrictEqual(gateway.providers, ["sandbox (ios, android)", "webpush (browsers)"])
      assert.deepStrictEqual(logLines.filter((l) => l.startsWith("push providers:")), ["push providers: sandbox (ios, android), webpush (browsers)"])
    }))

  it.effect("accepts an iOS push and records the APNs payload", () =>
    Effect.gen(function*() {
      const gateway = yield* PushGateway
      const repo = yield* SandboxRepo
      const t = target("ios", "a1b2c3")
      const outcome = yield* gateway.send(t, alert)
      assert.strictEqual(outcome._tag, "Accepted")
      if (outcome._tag !== "Accepted") return
      assert.match(outcome.providerId, /^sbx_[0-9a-z]{26}$/)
      const items = yield* repo.listForDevice(t.deviceId)
      assert.strictEqual(items.length, 1)
      const [item] = items
      assert.strictEqual(item!.id, outcome.providerId)
      assert.strictEqual(item!.pushType, "alert")
      assert.strictEqual(item!.priority, 10)
      assert.deepStrictEqual(item!.payload, alert.apns)
      assert.match(item!.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    }))

  it.effect("accepts an Android push and records the FCM message", () =>
    Effect.gen(function*() {
      const gateway = yield* PushGateway
      const repo = yield* SandboxRepo
      const t = target("android", "fcm-token-1")
      const outcome = yield* gateway.send(t, alert)
      assert.strictEqual(outcome._tag, "Accepted")
      const items = yield* repo.listForDevice(t.deviceId)
      assert.deepStrictEqual(items.map((i) => i.payload), [{
        token: "fcm-token-1",
        notification: { title: "Deploy?", body: "Approve the release" },
        data: { interactionId: "int_1" },
        android: { priority: "high", collapseKey: "int_1", ttl: 600_000 }
      }])
    }))

  it.effect("lists a device's deliveries oldest first, and only to its owner", () =>
    Effect.gen(function*() {
      const gateway = yield* PushGateway
      const repo = yield* SandboxRepo
      const t = target("ios", "ordered-token")
      yield* insertDevice({ id: t.deviceId, platform: "ios", token: t.token, userId: "usr_owner" })
      const ids: Array<string> = []
      for (const message of [alert, background, alert]) {
        const outcome = yield* gateway.send(t, message)
        if (outcome._tag === "Accepted") ids.push(outcome.providerId)
      }
      const items = yield* repo.listForDevice(t.deviceId)
      assert.deepStrictEqual(items.map((i) => i.id), ids)
      assert.deepStrictEqual(items.map((i) => [i.pushType, i.priority]), [["alert", 10], ["background", 5], ["alert", 10]])
      const mine = yield* repo.listForUserDevice("usr_owner", t.deviceId)
      assert.deepStrictEqual(Option.map(mine, (list) => list.map((i) => i.id)), Option.some(ids))
      assert.isTrue(Option.isNone(yield* repo.listForUserDevice("usr_someone_else", t.deviceId)))
      assert.deepStrictEqual(yield* repo.listForDevice(uniqueId("dev")), [])
    }))

  it.effect("answers unregistered- tokens as permanently unregistered and marks the device inactive", () =>
    Effect.gen(function*() {
      const gateway = yield* PushGateway
      const repo = yield* SandboxRepo
      const t = target("android", "unregistered-42")
      yield* insertDevice({ id: t.deviceId, platform: "android", token: t.token })
      assert.strictEqual(yield* deviceActive(t.deviceId), true)
      const outcome = yield* gateway.send(t, alert)
      assert.deepStrictEqual(outcome, { _tag: "Rejected", reason: "Unregistered", tokenInvalid: true })
      assert.strictEqual(yield* deviceActive(t.deviceId), false)
      assert.deepStrictEqual(yield* repo.listForDevice(t.deviceId), [])
    }))

  it.effect("leaves the device alone when only a live activity's token is unregistered", () =>
    Effect.gen(function*() {
      const gateway = yield* PushGateway
      const t = target("ios", "unregistered-activity-token")
      yield* insertDevice({ id: t.deviceId, platform: "ios", token: "the-device-token" })
      const outcome = yield* gateway.send(t, {
        pushType: "liveactivity",
        priority: 10,
        topicSuffix: ".push-type.liveactivity",
        apns: { aps: { timestamp: 1, event: "end", "content-state": {} } },
        fcm: { data: { event: "end" } }
      })
      assert.strictEqual(outcome._tag, "Rejected")
      assert.strictEqual(yield* deviceActive(t.deviceId), true)
    }))

  it.effect("answers unavailable- tokens as a transient failure, recording nothing", () =>
    Effect.gen(function*() {
      const gateway = yield* PushGateway
      const repo = yield* SandboxRepo
      const t = target("ios", "unavailable-1")
      yield* insertDevice({ id: t.deviceId, platform: "ios", token: t.token })
      const outcome = yield* gateway.send(t, alert)
      assert.deepStrictEqual(outcome, { _tag: "Retry", reason: "ServiceUnavailable", retryAfter: Option.none() })
      assert.strictEqual(yield* deviceActive(t.deviceId), true)
      assert.deepStrictEqual(yield* repo.listForDevice(t.deviceId), [])
    }))

  it.effect("refuses for good a payload over 4 KB, as APNs and FCM count it, leaving the device alone", () =>
    Effect.gen(function*() {
      const gateway = yield* PushGateway
      const repo = yield* SandboxRepo
      const fits = (text: string): PushMessage => ({
        ...alert,
        apns: { aps: { alert: { title: "t", body: text } } },
        fcm: { notification: { title: "t", body: text } }
      })
      const limit = (platform: "ios" | "android") =>
        platform === "ios" ? 4096 - Buffer.byteLength(JSON.stringify(fits("").apns)) : 4096 - Buffer.byteLength(JSON.stringify(fits("").fcm))
      for (const platform of ["ios", "android"] as const) {
        const t = target(platform, `big-${platform}`)
        yield* insertDevice({ id: t.deviceId, platform, token: t.token })
        assert.deepStrictEqual(yield* gateway.send(t, fits("x".repeat(limit(platform) + 1))), {
          _tag: "Rejected",
          reason: "PayloadTooLarge",
          tokenInvalid: false
        })
        assert.strictEqual((yield* gateway.send(t, fits("x".repeat(limit(platform)))))._tag, "Accepted")
        assert.strictEqual(yield* deviceActive(t.deviceId), true)
        assert.strictEqual((yield* repo.listForDevice(t.deviceId)).length, 1)
      }
    }))

  it.effect("counts sends by provider and outcome", () =>
    Effect.gen(function*() {
      const gateway = yield* PushGateway
      const counter = (outcome: string) =>
        Metric.value(Metric.withAttributes(sendsTotal, { provider: "sandbox", outcome }))
      const before = { accepted: (yield* counter("accepted")).count, rejected: (yield* counter("rejected")).count, retry: (yield* counter("retry")).count }
      yield* gateway.send(target("ios", "ok-1"), alert)
      yield* gateway.send(target("android", "ok-2"), alert)
      yield* gateway.send(target("ios", "unregistered-3"), alert)
      yield* gateway.send(target("ios", "unavailable-4"), alert)
      assert.strictEqual((yield* counter("accepted")).count - before.accepted, 2)
      assert.strictEqual((yield* counter("rejected")).count - before.rejected, 1)
      assert.strictEqual((yield* counter("retry")).count - before.retry, 1)
      const histogram = yield* Metric.value(Metric.withAttributes(sendDuration, { provider: "sandbox" }))
      assert.isAtLeast(histogram.count, 4)
    }))

  it.effect("sendWithRetry retries an unavailable- target maxAttempts times with backoff and jitter", () =>
    Effect.gen(function*() {
      const gateway = yield* PushGateway
      const retries = Metric.withAttributes(sendsTotal, { provider: "sandbox", outcome: "retry" })
      const start = (yield* Metric.value(retries)).count
      const attempts = Effect.map(Metric.value(retries), (v) => v.count - start)
      // Jitter draws 0, 0.75, 0.5, 1−ε: factors 0.8, 1.1, 1.0, ~1.2 of 200, 400, 800, 1600 ms.
      const expectedDelays = [160, 440, 800, 1920]
      const fiber = yield* gateway.sendWithRetry(target("ios", "unavailable-retry"), alert, { maxAttempts: 5 }).pipe(
        Effect.provideService(Random.Random, fixedRandom([0, 0.75, 0.5, 0.999_999_9])),
        Effect.forkChild
      )
      yield* TestClock.adjust(0)
      assert.strictEqual(yield* attempts, 1)
      for (const [i, delay] of expectedDelays.entries()) {
        yield* TestClock.adjust(Duration.millis(delay - 1))
        assert.strictEqual(yield* attempts, i + 1, `attempt ${i + 2} waits the full ${delay} ms`)
        yield* TestClock.adjust(Duration.millis(1))
        assert.strictEqual(yield* attempts, i + 2, `attempt ${i + 2} runs after ${delay} ms`)
      }
      const outcome = yield* Fiber.join(fiber)
      assert.deepStrictEqual(outcome, { _tag: "Retry", reason: "ServiceUnavailable", retryAfter: Option.none() })
      yield* TestClock.adjust(Duration.minutes(5))
      assert.strictEqual(yield* attempts, 5)
    }))

  it.effect("sendWithRetry stops at the first final outcome", () =>
    Effect.gen(function*() {
      const gateway = yield* PushGateway
      const fiber = yield* gateway.sendWithRetry(target("ios", "fine-token"), alert).pipe(Effect.forkChild)
      yield* TestClock.adjust(0)
      const outcome = yield* Fiber.join(fiber)
      assert.strictEqual(outcome._tag, "Accepted")
    }))
})
