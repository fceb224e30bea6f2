/** The retry delay policy and the outcome classifiers, as pure functions. */
import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Option } from "effect"
import { classifyApnsError } from "../../src/push/ApnsProvider.ts"
import { classifyFcmError } from "../../src/push/FcmProvider.ts"
import { backoffDelay, retryPolicy } from "../../src/push/PushGateway.ts"
import { parseRetryAfter, toFcmMessage } from "../../src/push/PushMessage.ts"

const ms = (d: Duration.Duration) => Duration.toMillis(d)

describe("backoffDelay", () => {
  it("doubles from 200 ms and stays within ±20% jitter", () => {
    const base = [200, 400, 800, 1600, 3200, 6400, 12_800, 25_600, 30_000, 30_000, 30_000]
    for (const [i, b] of base.entries()) {
      const attempt = i + 1
      assert.strictEqual(ms(backoffDelay(attempt, Option.none(), 0.5)), b, `attempt ${attempt} without jitter`)
      assert.strictEqual(ms(backoffDelay(attempt, Option.none(), 0)), Math.round(b * 0.8), `attempt ${attempt} at −20%`)
      for (let k = 0; k < 50; k++) {
        const d = ms(backoffDelay(attempt, Option.none(), Math.random()))
        assert.isAtLeast(d, Math.round(b * 0.8))
        assert.isAtMost(d, Math.round(b * 1.2))
      }
    }
  })

  it("caps the exponential part at 30 s", () => {
    assert.strictEqual(ms(backoffDelay(50, Option.none(), 0.5)), Duration.toMillis(retryPolicy.cap))
    assert.isAtMost(ms(backoffDelay(1000, Option.none(), 0.999_999)), 36_000)
  })

  it("waits at least the Retry-After", () => {
    assert.strictEqual(ms(backoffDelay(1, Option.some(Duration.seconds(5)), 0.9)), 5000)
    assert.strictEqual(ms(backoffDelay(1, Option.some(Duration.seconds(120)), 0)), 120_000)
    // A Retry-After shorter than the backoff does not shorten it.
    assert.strictEqual(ms(backoffDelay(4, Option.some(Duration.millis(100)), 0.5)), 1600)
  })
})

describe("parseRetryAfter", () => {
  const now = Date.parse("2026-03-01T12:00:00Z")
  it("reads delay seconds and HTTP dates", () => {
    assert.deepStrictEqual(parseRetryAfter("120", now), Option.some(Duration.seconds(120)))
    assert.deepStrictEqual(parseRetryAfter(["7"], now), Option.some(Duration.seconds(7)))
    assert.deepStrictEqual(parseRetryAfter("Sun, 01 Mar 2026 12:01:30 GMT", now), Option.some(Duration.seconds(90)))
  })
  it("ignores what is absent, malformed or past", () => {
    assert.isTrue(Option.isNone(parseRetryAfter(undefined, now)))
    assert.isTrue(Option.isNone(parseRetryAfter("", now)))
    assert.isTrue(Option.isNone(parseRetryAfter("soon", now)))
    assert.isTrue(Option.isNone(parseRetryAfter("Sun, 01 Mar 2026 11:00:00 GMT", now)))
  })
})

describe("classifyApnsError", () => {
  it("marks only dead tokens as such", () => {
    assert.deepStrictEqual(classifyApnsError(400, "BadDeviceToken", Option.none()), { _tag: "Rejected", reason: "BadDeviceToken", tokenInvalid: true })
    assert.deepStrictEqual(classifyApnsError(410, "Unregistered", Option.none()), { _tag: "Rejected", reason: "Unregistered", tokenInvalid: true })
    assert.deepStrictEqual(classifyApnsError(400, "BadCollapseId", Option.none()), { _tag: "Rejected", reason: "BadCollapseId", tokenInvalid: false })
    assert.deepStrictEqual(classifyApnsError(403, "InvalidProviderToken", Option.none()), {
      _tag: "Rejected",
      reason: "InvalidProviderToken",
      tokenInvalid: false
    })
  })
  it("retries throttling, server errors and an expired provider token", () => {
    const after = Option.some(Duration.seconds(3))
    assert.deepStrictEqual(classifyApnsError(429, "TooManyRequests", after), { _tag: "Retry", reason: "TooManyRequests", retryAfter: after })
    assert.deepStrictEqual(classifyApnsError(503, "ServiceUnavailable", Option.none()), {
      _tag: "Retry",
      reason: "ServiceUnavailable",
      retryAfter: Option.none()
    })
    assert.strictEqual(classifyApnsError(403, "ExpiredProviderToken", Option.none())._tag, "Retry")
  })
})

describe("classifyFcmError", () => {
  const serverError = (code: string, status: number, errorCode: string, headers: Record<string, string> = {}) => ({
    code,
    message: "from FCM",
    httpResponse: {
      status,
      headers,
      data: { error: { status: "X", details: [{ "@type": "type.googleapis.com/google.firebase.fcm.v1.FcmError", errorCode }] } }
    }
  })
  it("rejects dead tokens and retries the rest", () => {
    assert.deepStrictEqual(classifyFcmError(serverError("messaging/registration-token-not-registered", 404, "UNREGISTERED"), 0), {
      _tag: "Rejected",
      reason: "UNREGISTERED",
      tokenInvalid: true
    })
    assert.deepStrictEqual(classifyFcmError(serverError("messaging/server-unavailable", 503, "UNAVAILABLE", { "retry-after": "4" }), 0), {
      _tag: "Retry",
      reason: "UNAVAILABLE",
      retryAfter: Option.some(Duration.seconds(4))
    })
    assert.deepStrictEqual(classifyFcmError(serverError("messaging/third-party-auth-error", 401, "THIRD_PARTY_AUTH_ERROR"), 0), {
      _tag: "Rejected",
      reason: "THIRD_PARTY_AUTH_ERROR",
      tokenInvalid: false
    })
  })
  it("never marks a token dead for an error raised before any request", () => {
    assert.deepStrictEqual(classifyFcmError({ code: "messaging/invalid-argument", message: "data must only contain strings" }, 0), {
      _tag: "Rejected",
      reason: "invalid-argument",
      tokenInvalid: false
    })
    assert.deepStrictEqual(classifyFcmError(Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" }), 0), {
      _tag: "Retry",
      reason: "ConnectionError ECONNREFUSED",
      retryAfter: Option.none()
    })
  })
})

describe("toFcmMessage", () => {
  it.effect("maps the FCM part of a message onto firebase-admin's TokenMessage", () =>
    Effect.sync(() => {
      const message = toFcmMessage({ deviceId: "dev_1", platform: "android", token: "t" }, {
        pushType: "background",
        priority: 5,
        apns: { aps: {} },
        fcm: { data: { a: "1" }, android: { priority: "normal", ttlSeconds: 90 } }
      })
      assert.deepStrictEqual(message, { token: "t", data: { a: "1" }, android: { priority: "normal", ttl: 90_000 } })
    }))
})
