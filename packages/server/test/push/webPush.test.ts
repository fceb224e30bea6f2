/**
 * The Web Push provider against a push service on loopback that checks each
 * request's VAPID signature and decrypts its payload with the subscription's
 * private key (an RFC 8291 implementation of the test's own). Pushes go
 * through the durable outbox from a device row, as every capability sends
 * them: the contract's payloads (alert, close, card), the request options,
 * dead subscriptions, a push service's `Retry-After`, the outbound address
 * rules, and a key rotation.
 */
import { assert, layer } from "@effect/vitest"
import { ConfigProvider, Duration, Effect, Fiber, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { liveActivityMessage } from "../../src/activities/Cards.ts"
import { AppConfig } from "../../src/config/AppConfig.ts"
import { OutboxConfig } from "../../src/config/OutboxConfig.ts"
import { PushConfig } from "../../src/config/PushConfig.ts"
import { WebhookConfig } from "../../src/config/WebhookConfig.ts"
import { alertMessage, withdrawMessage } from "../../src/push/Alerts.ts"
import { GatewayRepo } from "../../src/push/GatewayRepo.ts"
import { Outbox } from "../../src/push/Outbox.ts"
import { QuietGate } from "../../src/quiet/QuietGate.ts"
import type { NewPush } from "../../src/push/Outbox.ts"
import { OutboxRepo } from "../../src/push/OutboxRepo.ts"
import { PushGateway } from "../../src/push/PushGateway.ts"
import type { PushMessage, PushTarget } from "../../src/push/PushMessage.ts"
import { SandboxRepo } from "../../src/push/SandboxRepo.ts"
import { WebPushKeys } from "../../src/push/WebPushKeys.ts"
import { makeWebPushProvider } from "../../src/push/WebPushProvider.ts"
import { OutboxWorkers } from "../../src/runtime/Workers.ts"
import { eventually } from "../../../../test/support/eventually.ts"
import { deviceActive, TestDatabase, uniqueId } from "./support.ts"
import { FakePushService } from "./webPushSupport.ts"
import type { TestSubscription } from "./webPushSupport.ts"

const TestOutboxConfig = Layer.succeed(OutboxConfig, {
  concurrency: 8,
  batchSize: 10,
  maxAttempts: 3,
  pollInterval: Duration.millis(50),
  requestWait: Duration.seconds(5),
  staleClaim: Duration.seconds(5),
  paused: false
})

const environment = {
  HERALD_ALLOW_PRIVATE_NETWORK_TARGETS: "1",
  HERALD_WEBPUSH_SUBJECT: "ops@example.test",
  PUSH_TIMEOUT_MS: "5000"
}

// The gateway as `herald serve` builds it from configuration, sharing its key store with the test.
const Gateway = PushGateway.layerNoDeps.pipe(
  Layer.provide([PushConfig.layer, AppConfig.layer, WebhookConfig.layer, SandboxRepo.layer, GatewayRepo.layer]),
  Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown(environment))),
  Layer.provideMerge(WebPushKeys.layer)
)

const TestLayer = OutboxWorkers.pipe(
  Layer.provideMerge(Outbox.layerNoDeps),
  Layer.provideMerge(Gateway),
  Layer.provide([TestOutboxConfig, OutboxRepo.layer, QuietGate.layer]),
  Layer.provideMerge(FakePushService.layer),
  Layer.provideMerge(TestDatabase)
)

/** A browser device of a fresh person, subscribed at the fake push service (with the current key). */
const browser = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const service = yield* FakePushService
  const keys = yield* WebPushKeys
  const id = uniqueId("dev")
  const userId = uniqueId("usr")
  const subscription = service.subscribe(id, yield* keys.publicKey)
  yield* sql`INSERT INTO users (id, email, name) VALUES (${userId}, ${`${userId}@example.test`}, 'test')`
  yield* sql`INSERT INTO devices (id, user_id, platform, push_token, web_push_p256dh, web_push_auth)
             VALUES (${id}, ${userId}, 'web', ${subscription.endpoint}, ${subscription.keys.p256dh}, ${subscription.keys.auth})`
  return { id, userId, subscription }
})

/** Queues `message` for the device and sends it now, as a capability does; answers the outbox's summary. */
const push = (device: { readonly id: string; readonly userId: string }, message: PushMessage, purpose: NewPush["purpose"] = "alert") =>
  Effect.gen(function*() {
    const outbox = yield* Outbox
    const ids = yield* outbox.enqueue([
      { userId: device.userId, deviceId: device.id, origin: "notification", itemId: uniqueId("anot"), purpose, message }
    ], { sendNow: true })
    return yield* outbox.sendNow(ids)
  })

const receipt = (deviceId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ status: string; attempts: number; errorCode: string | null; providerId: string | null }>`
      SELECT status, attempts, error_code, provider_id FROM push_receipts WHERE device_id = ${deviceId}
      ORDER BY created_at DESC LIMIT 1`).pipe(Effect.map((rows) => rows[0]!))

const notificationAlert = (id: string) =>
  alertMessage({
    ref: `notification:${id}`,
    collapseId: id,
    title: "Build finished",
    body: "All green on main",
    url: "https://ci.example.test/runs/42",
    imageUrl: null,
    threadId: "proj_1"
  })

const targetOf = (device: { readonly id: string; readonly subscription: TestSubscription }): PushTarget => ({
  deviceId: device.id,
  platform: "web",
  token: device.subscription.endpoint,
  webPush: device.subscription.keys
})

layer(TestLayer, { timeout: "60 seconds", excludeTestServices: true })("web push", (it) => {
  it.effect("a notification's alert reaches the browser signed and encrypted, and decrypts to the contract's payload", () =>
    Effect.gen(function*() {
      const service = yield* FakePushService
      const device = yield* browser
      const id = uniqueId("anot")
      const summary = yield* push(device, notificationAlert(id))
      assert.deepStrictEqual(summary, { accepted: 1, failed: 0, queued: 0 })
      const [received] = service.received(device.id)
      assert.deepStrictEqual(received!.payload, {
        v: 1,
        type: "alert",
        tag: id,
        title: "Build finished",
        body: "All green on main",
        url: "https://ci.example.test/runs/42",
        ref: `notification:${id}`,
        priority: "high",
        interaction: null,
        data: {}
      })
      // RFC 8292: signed for the push service's origin with the key browsers subscribe with.
      assert.strictEqual(received!.vapid.k, yield* Effect.flatMap(WebPushKeys, (k) => k.publicKey))
      assert.strictEqual(received!.vapid.claims.aud, service.origin)
      assert.strictEqual(received!.vapid.claims.sub, "mailto:ops@example.test")
      assert.strictEqual(received!.headers.urgency, "high")
      assert.strictEqual(received!.headers.ttl, "86400")
      assert.match(received!.headers.topic!, /^[A-Za-z0-9_-]{32}$/)
      // The push service's Location names the message: the receipt's provider id.
      const row = yield* receipt(device.id)
      assert.strictEqual(row.status, "accepted")
      assert.match(row.providerId!, new RegExp(`^${service.origin}/message/`))
      assert.deepStrictEqual(service.failures, [])
    }))

  it.effect("a prompt's alert carries the interaction; its withdraw closes the notification under the same tag and topic", () =>
    Effect.gen(function*() {
      const service = yield* FakePushService
      const device = yield* browser
      const id = uniqueId("int")
      yield* push(device, alertMessage({
        ref: `interaction:${id}`,
        collapseId: id,
        title: "Deploy to production?",
        body: "v2.4.1, 3 migrations",
        url: null,
        imageUrl: null,
        threadId: null,
        category: "HERALD_APPROVAL",
        data: { interactionId: id, kind: "approval", actionDigest: "abc123" }
      }))
      yield* push(device, withdrawMessage(id), "withdraw")
      const [alert, close] = service.received(device.id)
      assert.deepStrictEqual(alert!.payload, {
        v: 1,
        type: "alert",
        tag: id,
        title: "Deploy to production?",
        body: "v2.4.1, 3 migrations",
        url: null,
        ref: `interaction:${id}`,
        priority: "high",
        interaction: { id, kind: "approval" },
        data: { actionDigest: "abc123", category: "HERALD_APPROVAL" }
      })
      assert.deepStrictEqual(close!.payload, { v: 1, type: "close", tag: id })
      // The close replaces the alert at a push service still holding it; it keeps a day to arrive.
      assert.strictEqual(close!.headers.topic, alert!.headers.topic)
      assert.strictEqual(close!.headers.urgency, "normal")
      assert.strictEqual(close!.headers.ttl, "86400")
    }))

  it.effect("a live activity update is a card under the activity's tag", () =>
    Effect.gen(function*() {
      const service = yield* FakePushService
      const device = yield* browser
      yield* push(device, liveActivityMessage({
        activityId: "act_deploy1",
        event: "update",
        state: { title: "Deploying", subtitle: "api", status: "migrating", progress: 0.4, layout: "ring" },
        priority: 5,
        timestampSeconds: 1_700_000_000
      }))
      const [card] = service.received(device.id)
      assert.deepStrictEqual(card!.payload, {
        v: 1,
        type: "card",
        tag: "act_deploy1",
        title: "Deploying",
        body: "api · migrating · 40%",
        data: { activityId: "act_deploy1", event: "update", layout: "ring", status: "migrating", progress: "0.4", timestamp: "1700000000" }
      })
      assert.strictEqual(card!.headers.urgency, "normal")
    }))

  it.effect("a long alert is cut to the 3,000-byte payload bound, never refused", () =>
    Effect.gen(function*() {
      const service = yield* FakePushService
      const device = yield* browser
      const id = uniqueId("anot")
      const summary = yield* push(device, alertMessage({
        ref: `notification:${id}`,
        collapseId: id,
        title: "Long",
        body: "é".repeat(1900),
        url: "https://example.test/x",
        imageUrl: null,
        threadId: null
      }))
      assert.strictEqual(summary.accepted, 1)
      const payload = service.received(device.id)[0]!.payload as { body: string; url: string | null }
      assert.isAtMost(Buffer.byteLength(JSON.stringify(payload)), 3000)
      assert.isTrue(payload.body.endsWith("…"))
      assert.isNull(payload.url)
    }))

  it.effect("410 and 404 from the push service mark the device inactive, as APNs Unregistered does", () =>
    Effect.gen(function*() {
      const service = yield* FakePushService
      for (const status of [410, 404]) {
        const device = yield* browser
        service.answer(device.id, { status })
        const summary = yield* push(device, notificationAlert(uniqueId("anot")))
        assert.deepStrictEqual(summary, { accepted: 0, failed: 1, queued: 0 })
        assert.strictEqual((yield* receipt(device.id)).errorCode, status === 410 ? "Gone" : "NotFound")
        assert.isFalse(yield* deviceActive(device.id))
      }
    }))

  it.effect("400 and 413 refuse the push for good and leave the device alone", () =>
    Effect.gen(function*() {
      const service = yield* FakePushService
      const device = yield* browser
      service.answer(device.id, { status: 413 }, { status: 400 })
      assert.strictEqual((yield* push(device, notificationAlert(uniqueId("anot")))).failed, 1)
      assert.strictEqual((yield* receipt(device.id)).errorCode, "PayloadTooLarge")
      assert.strictEqual((yield* push(device, notificationAlert(uniqueId("anot")))).failed, 1)
      assert.strictEqual((yield* receipt(device.id)).errorCode, "BadRequest")
      assert.isTrue(yield* deviceActive(device.id))
    }))

  it.effect("429 with Retry-After: the outbox sends again once the push service's wait is over", () =>
    Effect.gen(function*() {
      const service = yield* FakePushService
      const device = yield* browser
      service.answer(device.id, { status: 429, headers: { "retry-after": "2" } })
      const summary = yield* push(device, notificationAlert(uniqueId("anot")))
      assert.deepStrictEqual(summary, { accepted: 0, failed: 0, queued: 1 })
      const row = yield* eventually(receipt(device.id), (r) => r.status === "accepted")
      assert.strictEqual(row.attempts, 2)
      const [first, second] = service.received(device.id)
      // The retry waited for the push service (2 s), not the outbox's first backoff step (~200 ms).
      assert.isAtLeast(second!.at - first!.at, 1900)
    }))

  it.effect("sendWithRetry waits out Retry-After on the clock before its next attempt", () =>
    Effect.gen(function*() {
      const service = yield* FakePushService
      const gateway = yield* PushGateway
      const device = yield* browser
      service.answer(device.id, { status: 429, headers: { "retry-after": "2" } })
      const sending = yield* Effect.forkChild(gateway.sendWithRetry(targetOf(device), notificationAlert(uniqueId("anot"))))
      yield* waitFor(() => service.received(device.id).length === 1)
      yield* TestClock.adjust("1900 millis")
      assert.strictEqual(service.received(device.id).length, 1)
      yield* TestClock.adjust("100 millis")
      const outcome = yield* Fiber.join(sending)
      assert.strictEqual(outcome._tag, "Accepted")
      assert.strictEqual(service.received(device.id).length, 2)
    }).pipe(Effect.provide(TestClock.layer())))

  it.effect("without the private-network switch, loopback and private endpoints are refused and nothing is sent", () =>
    Effect.gen(function*() {
      const service = yield* FakePushService
      const device = yield* browser
      const closed = yield* makeWebPushProvider({ subject: "mailto:ops@example.test", allowPrivateNetwork: false, timeout: Duration.seconds(5) })
      const before = service.requestCount()
      const endpoints = [
        device.subscription.endpoint,
        "https://127.0.0.1/push/x",
        "https://10.1.2.3/push/x",
        "https://192.168.1.20/push/x",
        "https://[fd00::1]/push/x",
        "https://169.254.169.254/latest"
      ]
      for (const endpoint of endpoints) {
        const outcome = yield* closed.send({ ...targetOf(device), token: endpoint }, notificationAlert(uniqueId("anot")))
        assert.strictEqual(outcome._tag, "Rejected", endpoint)
        if (outcome._tag === "Rejected") {
          assert.match(outcome.reason, /^AddressRefused: /, endpoint)
          assert.isFalse(outcome.tokenInvalid)
        }
      }
      assert.strictEqual(service.requestCount(), before)
      // The switch admits loopback; link-local and metadata addresses stay refused with it.
      const open = yield* PushGateway
      const metadata = yield* open.send({ ...targetOf(device), token: "https://169.254.169.254/latest" }, notificationAlert(uniqueId("anot")))
      assert.strictEqual(metadata._tag, "Rejected")
      assert.strictEqual((yield* open.send(targetOf(device), notificationAlert(uniqueId("anot"))))._tag, "Accepted")
    }))

  it.effect("a rotation changes the key served, retires browsers subscribed with the old one, and signs with the new", () =>
    Effect.gen(function*() {
      const service = yield* FakePushService
      const keys = yield* WebPushKeys
      const old = yield* browser
      const before = yield* keys.publicKey
      const rotated = yield* keys.rotate
      assert.notStrictEqual(rotated.key.publicKey, before)
      assert.strictEqual(yield* keys.publicKey, rotated.key.publicKey)
      assert.isAtLeast(rotated.deactivatedDevices, 1)
      assert.isFalse(yield* deviceActive(old.id))
      assert.strictEqual((yield* keys.keys).find((k) => k.publicKey === before)?.retiredAt !== null, true)
      // A browser subscribing again (with the new key) gets pushes signed with it.
      const again = yield* browser
      assert.strictEqual((yield* push(again, notificationAlert(uniqueId("anot")))).accepted, 1)
      assert.strictEqual(service.received(again.id)[0]!.vapid.k, rotated.key.publicKey)
    }))
})

/** Waits for something the fake push service records, on real time (a test clock leaves I/O alone). */
const waitFor = (check: () => boolean) =>
  Effect.promise(() =>
    new Promise<void>((resolve, reject) => {
      const started = Date.now()
      const poll = () => {
        if (check()) return resolve()
        if (Date.now() - started > 10_000) return reject(new Error("not reached within 10 s"))
        setTimeout(poll, 20)
      }
      poll()
    })
  )
