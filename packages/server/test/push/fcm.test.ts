/**
 * The FCM adapter (firebase-admin) against a fake of Google's hosts on
 * https://127.0.0.151:<port>: the OAuth token endpoint (JWT-bearer grant signed
 * with the service account's key) and the FCM v1 `messages:send` endpoint. The
 * gateway is built from configuration as `herald serve` builds it; `FCM_ENDPOINT`
 * sends the connections firebase-admin opens to fcm.googleapis.com and
 * oauth2.googleapis.com to the fake, whose certificate comes from a CA made for
 * this file and trusted in-process.
 */
import { assert, layer } from "@effect/vitest"
import { ConfigProvider, Duration, Effect, Layer, Logger, Option, Redacted, References } from "effect"
import { makeFcmProvider } from "../../src/push/FcmProvider.ts"
import { PushGateway } from "../../src/push/PushGateway.ts"
import type { PushMessage, PushTarget } from "../../src/push/PushMessage.ts"
import {
  deviceActive,
  FakeFcm,
  fcmError,
  insertDevice,
  makeServiceAccount,
  makeTestCertificates,
  TestDatabase,
  trustTestCa,
  uniqueId
} from "./support.ts"

const address = "127.0.0.151"
const projectId = "herald-test-project"

const certificates = makeTestCertificates({ ips: [address] })
trustTestCa(certificates.ca)
const serviceAccount = makeServiceAccount(projectId)

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

const FakeLayer = FakeFcm.layer({ address, certificates, serviceAccount: serviceAccount.json, publicKey: serviceAccount.publicKey })

const GatewayLayer = Layer.unwrap(Effect.gen(function*() {
  const fake = yield* FakeFcm
  return PushGateway.layer.pipe(
    Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({
      FCM_SERVICE_ACCOUNT: JSON.stringify(serviceAccount.json),
      FCM_ENDPOINT: fake.url,
      PUSH_TIMEOUT_MS: "5000"
    }))),
    Layer.provide(CaptureLogs)
  )
}))

const TestLayer = GatewayLayer.pipe(Layer.provideMerge(FakeLayer), Layer.provideMerge(TestDatabase))

const card: PushMessage = {
  pushType: "alert",
  priority: 10,
  collapseId: "act_7",
  apns: { aps: { alert: { title: "Build", body: "40%" } } },
  fcm: {
    notification: { title: "Build", body: "40%" },
    data: { activityId: "act_7", progress: "0.4" },
    android: { priority: "high", collapseKey: "act_7", ttlSeconds: 3600 }
  }
}

const androidDevice = (token: string): PushTarget => ({ deviceId: uniqueId("dev"), platform: "android", token })

layer(TestLayer, { timeout: "60 seconds", excludeTestServices: true })("FCM provider", (it) => {
  it.effect("is chosen from configuration and named in one start-up line", () =>
    Effect.gen(function*() {
      const gateway = yield* PushGateway
      assert.deepStrictEqual(gateway.providers, ["sandbox (ios)", `fcm (project ${projectId})`, "webpush (browsers)"])
      assert.deepStrictEqual(
        logLines.filter((l) => l.startsWith("push providers:")),
        [`push providers: sandbox (ios), fcm (project ${projectId}), webpush (browsers)`]
      )
    }))

  it.effect("exchanges the service account for a token, sends the v1 message and answers Accepted with its name", () =>
    Effect.gen(function*() {
      const gateway = yield* PushGateway
      const fake = yield* FakeFcm
      const outcome = yield* gateway.send(androidDevice("fcm-token-accepted"), card)
      assert.deepStrictEqual(outcome, { _tag: "Accepted", providerId: `projects/${projectId}/messages/1` })

      // The OAuth token exchange: a JWT-bearer grant to the token URI, signed by the service account.
      assert.strictEqual(fake.exchanges.length, 1)
      const [exchange] = fake.exchanges
      assert.strictEqual(exchange!.host, "oauth2.googleapis.com")
      assert.strictEqual(exchange!.grantType, "urn:ietf:params:oauth:grant-type:jwt-bearer")
      assert.isTrue(exchange!.assertion.valid, "the assertion's RS256 signature verifies with the service account's public key")
      assert.strictEqual(exchange!.assertion.header.kid, serviceAccount.json.private_key_id)
      assert.strictEqual(exchange!.assertion.claims.iss, serviceAccount.json.client_email)
      assert.strictEqual(exchange!.assertion.claims.aud, "https://oauth2.googleapis.com/token")
      assert.strictEqual(exchange!.assertion.claims.scope, "https://www.googleapis.com/auth/firebase.messaging")
      assert.isDefined(exchange!.accessToken)

      // The send: v1 endpoint of the project, bearer token from the exchange, {message: {token, …}}.
      const [send] = fake.sendsForToken("fcm-token-accepted")
      assert.strictEqual(send!.method, "POST")
      assert.strictEqual(send!.path, `/v1/projects/${projectId}/messages:send`)
      assert.strictEqual(send!.authority, "fcm.googleapis.com")
      assert.strictEqual(send!.headers.authorization, `Bearer ${exchange!.accessToken}`)
      assert.deepStrictEqual(send!.json, {
        message: {
          token: "fcm-token-accepted",
          notification: { title: "Build", body: "40%" },
          data: { activityId: "act_7", progress: "0.4" },
          android: { priority: "high", collapse_key: "act_7", ttl: "3600s" }
        }
      })
    }))

  it.effect("reuses the access token for later sends", () =>
    Effect.gen(function*() {
      const gateway = yield* PushGateway
      const fake = yield* FakeFcm
      yield* gateway.send(androidDevice("fcm-token-a"), card)
      yield* gateway.send(androidDevice("fcm-token-b"), { ...card, fcm: { data: { ping: "1" } } })
      assert.strictEqual(fake.exchanges.length, 1)
      assert.strictEqual(fake.sendsForToken("fcm-token-a")[0]!.headers.authorization, `Bearer ${fake.exchanges[0]!.accessToken}`)
      assert.deepStrictEqual(fake.sendsForToken("fcm-token-b").map((s) => s.json), [{ message: { token: "fcm-token-b", data: { ping: "1" } } }])
    }))

  it.effect("answers 404 UNREGISTERED as Rejected and marks the device inactive", () =>
    Effect.gen(function*() {
      const gateway = yield* PushGateway
      const fake = yield* FakeFcm
      const target = androidDevice("fcm-token-unregistered")
      yield* insertDevice({ id: target.deviceId, platform: "android", token: target.token })
      fake.answers.set(target.token, { status: 404, body: fcmError(404, "NOT_FOUND", "UNREGISTERED", "Requested entity was not found.") })
      assert.deepStrictEqual(yield* gateway.send(target, card), { _tag: "Rejected", reason: "UNREGISTERED", tokenInvalid: true })
      assert.strictEqual(yield* deviceActive(target.deviceId), false)
    }))

  it.effect("answers 400 INVALID_ARGUMENT about the token as Rejected and marks the device inactive", () =>
    Effect.gen(function*() {
      const gateway = yield* PushGateway
      const fake = yield* FakeFcm
      const target = androidDevice("fcm-token-invalid")
      yield* insertDevice({ id: target.deviceId, platform: "android", token: target.token })
      fake.answers.set(target.token, {
        status: 400,
        body: fcmError(400, "INVALID_ARGUMENT", "INVALID_ARGUMENT", "The registration token is not a valid FCM registration token", [
          {
            "@type": "type.googleapis.com/google.rpc.BadRequest",
            fieldViolations: [{ field: "message.token", description: "The registration token is not a valid FCM registration token" }]
          }
        ])
      })
      assert.deepStrictEqual(yield* gateway.send(target, card), { _tag: "Rejected", reason: "INVALID_ARGUMENT", tokenInvalid: true })
      assert.strictEqual(yield* deviceActive(target.deviceId), false)
    }))

  it.effect("answers 503 UNAVAILABLE as Retry after exactly one request", () =>
    Effect.gen(function*() {
      const gateway = yield* PushGateway
      const fake = yield* FakeFcm
      const target = androidDevice("fcm-token-unavailable")
      yield* insertDevice({ id: target.deviceId, platform: "android", token: target.token })
      fake.answers.set(target.token, {
        status: 503,
        headers: { "retry-after": "17" },
        body: fcmError(503, "UNAVAILABLE", "UNAVAILABLE", "The service is currently unavailable.")
      })
      assert.deepStrictEqual(yield* gateway.send(target, card), {
        _tag: "Retry",
        reason: "UNAVAILABLE",
        retryAfter: Option.some(Duration.seconds(17))
      })
      // firebase-admin's own 503 retry is off: the gateway's caller owns retries.
      assert.strictEqual(fake.sendsForToken(target.token).length, 1)
      assert.strictEqual(yield* deviceActive(target.deviceId), true)
    }))

  it.effect("answers 429 RESOURCE_EXHAUSTED as Retry with the Retry-After", () =>
    Effect.gen(function*() {
      const gateway = yield* PushGateway
      const fake = yield* FakeFcm
      const target = androidDevice("fcm-token-quota")
      fake.answers.set(target.token, {
        status: 429,
        headers: { "retry-after": "30" },
        body: fcmError(429, "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED", "Quota exceeded for quota metric 'Send requests'.")
      })
      assert.deepStrictEqual(yield* gateway.send(target, card), {
        _tag: "Retry",
        reason: "QUOTA_EXCEEDED",
        retryAfter: Option.some(Duration.seconds(30))
      })
    }))

  it.effect("rejects an INVALID_ARGUMENT about the message without touching the device", () =>
    Effect.gen(function*() {
      const gateway = yield* PushGateway
      const fake = yield* FakeFcm
      const target = androidDevice("fcm-token-bad-payload")
      yield* insertDevice({ id: target.deviceId, platform: "android", token: target.token })
      fake.answers.set(target.token, {
        status: 400,
        body: fcmError(400, "INVALID_ARGUMENT", "INVALID_ARGUMENT", "Invalid value at 'message.android.ttl'", [
          { "@type": "type.googleapis.com/google.rpc.BadRequest", fieldViolations: [{ field: "message.android.ttl" }] }
        ])
      })
      assert.deepStrictEqual(yield* gateway.send(target, card), { _tag: "Rejected", reason: "INVALID_ARGUMENT", tokenInvalid: false })
      assert.strictEqual(yield* deviceActive(target.deviceId), true)
    }))

  it.effect("classifies a request that outlives the timeout as Retry", () =>
    Effect.gen(function*() {
      const fake = yield* FakeFcm
      const provider = yield* makeFcmProvider({
        serviceAccount: Redacted.make(serviceAccount.json),
        projectId,
        endpoint: Option.some(new URL(fake.url))
      }, Duration.millis(500))
      fake.answers.set("fcm-token-hangs", "hang")
      const outcome = yield* provider.send(androidDevice("fcm-token-hangs"), card)
      assert.deepStrictEqual(outcome, { _tag: "Retry", reason: "Timeout", retryAfter: Option.none() })
    }))

  it.effect("classifies a refused token exchange as Retry, not as a dead device", () =>
    Effect.gen(function*() {
      const fake = yield* FakeFcm
      const stranger = makeServiceAccount(projectId)
      const provider = yield* makeFcmProvider({
        // Signed by a key the token endpoint does not know.
        serviceAccount: Redacted.make({ ...stranger.json, client_email: serviceAccount.json.client_email }),
        projectId,
        endpoint: Option.some(new URL(fake.url))
      }, Duration.seconds(5))
      const outcome = yield* provider.send(androidDevice("fcm-token-any"), card)
      assert.strictEqual(outcome._tag, "Retry")
      assert.match(outcome._tag === "Retry" ? outcome.reason : "", /^CredentialError app\//)
    }))
})
