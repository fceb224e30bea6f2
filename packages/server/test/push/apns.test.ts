/**
 * The APNs adapter (apns2) against a fake APNs speaking HTTP/2 over TLS on
 * 127.0.0.141:443 (production host) and 127.0.0.142:443 (sandbox host), with a
 * certificate from a CA made for this file and trusted in-process. The gateway
 * is built from configuration exactly as `herald serve` builds it.
 */
import { assert, layer } from "@effect/vitest"
import { ConfigProvider, Duration, Effect, Layer, Logger, Option, Redacted, References } from "effect"
import { makeApnsProvider } from "../../src/push/ApnsProvider.ts"
import { PushGateway } from "../../src/push/PushGateway.ts"
import type { PushMessage, PushTarget } from "../../src/push/PushMessage.ts"
import {
  decodeJwt,
  deviceActive,
  FakeApns,
  insertDevice,
  makeApnsKey,
  makeTestCertificates,
  TestDatabase,
  trustTestCa,
  uniqueId
} from "./support.ts"

const productionHost = "127.0.0.141"
const sandboxHost = "127.0.0.142"
const closedHost = "127.0.0.143"
const teamId = "TEAM123456"
const keyId = "KEY7654321"
const topic = "dev.herald.app"

const certificates = makeTestCertificates({ ips: [productionHost, sandboxHost, closedHost] })
trustTestCa(certificates.ca)
const apnsKey = makeApnsKey()

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

const environment = {
  APNS_KEY: apnsKey.pem,
  APNS_KEY_ID: keyId,
  APNS_TEAM_ID: teamId,
  APNS_TOPIC: topic,
  APNS_HOST: productionHost,
  APNS_SANDBOX_HOST: sandboxHost,
  PUSH_TIMEOUT_MS: "5000"
}

const TestLayer = PushGateway.layer.pipe(
  Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown(environment))),
  Layer.provide(CaptureLogs),
  Layer.provideMerge(FakeApns.layer({ addresses: [productionHost, sandboxHost], certificates, publicKey: apnsKey.publicKey, teamId, keyId, topic })),
  Layer.provideMerge(TestDatabase)
)

const alert: PushMessage = {
  pushType: "alert",
  priority: 5,
  collapseId: "int_42",
  expiration: 1_900_000_000,
  apns: {
    aps: { alert: { title: "Deploy?", body: "Approve the release" }, sound: "default", category: "APPROVAL" },
    interactionId: "int_42"
  },
  fcm: { notification: { title: "Deploy?", body: "Approve the release" } }
}

const liveActivityUpdate: PushMessage = {
  pushType: "liveactivity",
  priority: 10,
  topicSuffix: ".push-type.liveactivity",
  apns: { aps: { timestamp: 1_800_000_000, event: "update", "content-state": { progress: 0.4, label: "Building" } } },
  fcm: { data: { progress: "0.4" } }
}

const iosDevice = (token: string, environment?: "sandbox" | "production"): PushTarget => ({
  deviceId: uniqueId("dev"),
  platform: "ios",
  token,
  ...(environment !== undefined ? { environment } : {})
})

layer(TestLayer, { timeout: "60 seconds", excludeTestServices: true })("APNs provider", (it) => {
  it.effect("is chosen from configuration and named in one start-up line", () =>
    Effect.gen(function*() {
      const gateway = yield* PushGateway
      assert.deepStrictEqual(gateway.providers, [`apns (${productionHost}, sandbox ${sandboxHost})`, "sandbox (android)", "webpush (browsers)"])
      assert.deepStrictEqual(
        logLines.filter((l) => l.startsWith("push providers:")),
        [`push providers: apns (${productionHost}, sandbox ${sandboxHost}), sandbox (android), webpush (browsers)`]
      )
    }))

  it.effect("sends an alert as Apple expects and answers Accepted with the apns-id", () =>
    Effect.gen(function*() {
      const gateway = yield* PushGateway
      const fake = yield* FakeApns
      const token = "a0b1c2d3e4f5"
      fake.answers.set(token, { status: 200, headers: { "apns-id": "6E6F7A1C-9C36-4C3B-8C2E-0D8A1B2C3D4E" } })
      const outcome = yield* gateway.send(iosDevice(token), alert)
      assert.deepStrictEqual(outcome, { _tag: "Accepted", providerId: "6E6F7A1C-9C36-4C3B-8C2E-0D8A1B2C3D4E" })

      const [request] = fake.forToken(token)
      assert.isDefined(request)
      assert.strictEqual(request!.method, "POST")
      assert.strictEqual(request!.path, `/3/device/${token}`)
      assert.strictEqual(request!.authority, productionHost)
      assert.strictEqual(request!.headers["apns-push-type"], "alert")
      assert.strictEqual(request!.headers["apns-priority"], "5")
      assert.strictEqual(request!.headers["apns-collapse-id"], "int_42")
      assert.strictEqual(request!.headers["apns-expiration"], "1900000000")
      assert.strictEqual(request!.headers["apns-topic"], topic)
      assert.deepStrictEqual(JSON.parse(request!.body), alert.apns)

      const bearer = /^bearer (.+)$/.exec(request!.headers.authorization ?? "")
      assert.isNotNull(bearer)
      const jwt = decodeJwt(bearer![1]!, apnsKey.publicKey)
      assert.isTrue(jwt.valid, "the JWT's ES256 signature verifies with the key's public half")
      assert.strictEqual(jwt.header.alg, "ES256")
      assert.strictEqual(jwt.header.kid, keyId)
      assert.strictEqual(jwt.claims.iss, teamId)
      assert.isNumber(jwt.claims.iat)
      assert.isAtMost(Math.abs((jwt.claims.iat as number) - Date.now() / 1000), 120)
    }))

  it.effect("sends a live activity update on the .push-type.liveactivity topic at priority 10", () =>
    Effect.gen(function*() {
      const gateway = yield* PushGateway
      const fake = yield* FakeApns
      const token = "f00dcafe0001"
      const outcome = yield* gateway.send(iosDevice(token), liveActivityUpdate)
      assert.strictEqual(outcome._tag, "Accepted")
      const [request] = fake.forToken(token)
      assert.strictEqual(request!.headers["apns-push-type"], "liveactivity")
      assert.strictEqual(request!.headers["apns-topic"], `${topic}.push-type.liveactivity`)
      // apns2 leaves out apns-priority for 10, which is what APNs assumes without it.
      assert.isUndefined(request!.headers["apns-priority"])
      assert.isUndefined(request!.headers["apns-collapse-id"])
      assert.deepStrictEqual(JSON.parse(request!.body), liveActivityUpdate.apns)
      assert.strictEqual(outcome._tag === "Accepted" && /^[0-9A-F-]{36}$/.test(outcome.providerId), true)
    }))

  it.effect("puts a live activity push on the live activity topic even without a topic suffix", () =>
    Effect.gen(function*() {
      const gateway = yield* PushGateway
      const fake = yield* FakeApns
      const { topicSuffix: _, ...withoutSuffix } = liveActivityUpdate
      assert.strictEqual((yield* gateway.send(iosDevice("f00dcafe0002"), withoutSuffix))._tag, "Accepted")
      assert.deepStrictEqual(fake.forToken("f00dcafe0002").map((r) => r.headers["apns-topic"]), [`${topic}.push-type.liveactivity`])
    }))

  it.effect("sends sandbox-environment tokens to the sandbox host", () =>
    Effect.gen(function*() {
      const gateway = yield* PushGateway
      const fake = yield* FakeApns
      const outcome = yield* gateway.send(iosDevice("5a5a5a5a", "sandbox"), alert)
      assert.strictEqual(outcome._tag, "Accepted")
      assert.deepStrictEqual(fake.forToken("5a5a5a5a").map((r) => r.authority), [sandboxHost])
      yield* gateway.send(iosDevice("7b7b7b7b", "production"), alert)
      assert.deepStrictEqual(fake.forToken("7b7b7b7b").map((r) => r.authority), [productionHost])
    }))

  it.effect.each([
    { status: 400, reason: "BadDeviceToken" },
    { status: 410, reason: "Unregistered" }
  ])("answers $status $reason as Rejected and marks the device inactive", ({ reason, status }) =>
    Effect.gen(function*() {
      const gateway = yield* PushGateway
      const fake = yield* FakeApns
      const target = iosDevice(`dead-${status}`)
      yield* insertDevice({ id: target.deviceId, platform: "ios", token: target.token })
      fake.answers.set(target.token, {
        status,
        body: status === 410 ? { reason, timestamp: 1_700_000_000_000 } : { reason }
      })
      const outcome = yield* gateway.send(target, alert)
      assert.deepStrictEqual(outcome, { _tag: "Rejected", reason, tokenInvalid: true })
      assert.strictEqual(yield* deviceActive(target.deviceId), false)
    }))

  it.effect("answers 429 TooManyRequests as Retry with the Retry-After", () =>
    Effect.gen(function*() {
      const gateway = yield* PushGateway
      const fake = yield* FakeApns
      const target = iosDevice("busy-429")
      yield* insertDevice({ id: target.deviceId, platform: "ios", token: target.token })
      fake.answers.set(target.token, { status: 429, headers: { "retry-after": "120" }, body: { reason: "TooManyRequests" } })
      const outcome = yield* gateway.send(target, alert)
      assert.deepStrictEqual(outcome, { _tag: "Retry", reason: "TooManyRequests", retryAfter: Option.some(Duration.seconds(120)) })
      assert.strictEqual(yield* deviceActive(target.deviceId), true)
    }))

  it.effect("answers 503 ServiceUnavailable as Retry, honouring an HTTP-date Retry-After", () =>
    Effect.gen(function*() {
      const gateway = yield* PushGateway
      const fake = yield* FakeApns
      const target = iosDevice("down-503")
      const at = new Date(Date.now() + 90_000)
      at.setMilliseconds(0)
      fake.answers.set(target.token, { status: 503, headers: { "retry-after": at.toUTCString() }, body: { reason: "ServiceUnavailable" } })
      const outcome = yield* gateway.send(target, alert)
      assert.strictEqual(outcome._tag, "Retry")
      if (outcome._tag !== "Retry") return
      assert.strictEqual(outcome.reason, "ServiceUnavailable")
      const wait = Duration.toMillis(Option.getOrThrow(outcome.retryAfter))
      assert.isAbove(wait, 80_000)
      assert.isAtMost(wait, 90_000)
    }))

  it.effect("answers 500 InternalServerError as Retry without a Retry-After", () =>
    Effect.gen(function*() {
      const gateway = yield* PushGateway
      const fake = yield* FakeApns
      const target = iosDevice("broken-500")
      fake.answers.set(target.token, { status: 500, body: { reason: "InternalServerError" } })
      assert.deepStrictEqual(yield* gateway.send(target, alert), {
        _tag: "Retry",
        reason: "InternalServerError",
        retryAfter: Option.none()
      })
    }))

  it.effect("rejects a push APNs refuses for its own sake without touching the device", () =>
    Effect.gen(function*() {
      const gateway = yield* PushGateway
      const fake = yield* FakeApns
      const target = iosDevice("too-large-413")
      yield* insertDevice({ id: target.deviceId, platform: "ios", token: target.token })
      fake.answers.set(target.token, { status: 413, body: { reason: "PayloadTooLarge" } })
      assert.deepStrictEqual(yield* gateway.send(target, alert), { _tag: "Rejected", reason: "PayloadTooLarge", tokenInvalid: false })
      assert.strictEqual(yield* deviceActive(target.deviceId), true)
    }))

  it.effect("classifies a request that outlives the timeout as Retry", () =>
    Effect.gen(function*() {
      const fake = yield* FakeApns
      const provider = yield* makeApnsProvider({
        key: Redacted.make(apnsKey.pem),
        keyId,
        teamId,
        topic,
        host: productionHost,
        sandboxHost: Option.none()
      }, Duration.millis(300))
      fake.answers.set("hangs-forever", "hang")
      const outcome = yield* provider.send(iosDevice("hangs-forever"), alert)
      assert.deepStrictEqual(outcome, { _tag: "Retry", reason: "Timeout", retryAfter: Option.none() })
      assert.strictEqual(fake.forToken("hangs-forever").length, 1)
    }))

  it.effect("classifies a host that refuses connections as Retry", () =>
    Effect.gen(function*() {
      const provider = yield* makeApnsProvider({
        key: Redacted.make(apnsKey.pem),
        keyId,
        teamId,
        topic,
        host: closedHost,
        sandboxHost: Option.none()
      }, Duration.seconds(5))
      const outcome = yield* provider.send(iosDevice("nobody-home"), alert)
      assert.strictEqual(outcome._tag, "Retry")
      assert.match(outcome._tag === "Retry" ? outcome.reason : "", /^ConnectionError/)
    }))
})
