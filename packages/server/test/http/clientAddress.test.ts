/**
 * The client address a per-address limit counts (http/ClientAddress.ts), the
 * `HERALD_TRUSTED_PROXIES` setting, and the limiter's refill on its own clock
 * (http/AddressThrottle.ts).
 */
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect } from "effect"
import { throttleConfig } from "../../src/config/ThrottleConfig.ts"
import { makeAddressThrottle } from "../../src/http/AddressThrottle.ts"
import type { Policy } from "../../src/http/AddressThrottle.ts"
import { addressKey, clientKey, parseTrustedProxies } from "../../src/http/ClientAddress.ts"

describe("client address", () => {
  it("IPv4 as written, IPv4-mapped IPv6 as its IPv4, IPv6 as its /64, anything else no address", () => {
    assert.strictEqual(addressKey("203.0.113.1"), "203.0.113.1")
    assert.strictEqual(addressKey("::ffff:203.0.113.1"), "203.0.113.1")
    assert.strictEqual(addressKey("2001:db8:1:2:3:4:5:6"), "2001:db8:1:2::/64")
    assert.strictEqual(addressKey("2001:DB8:1:2::9"), "2001:db8:1:2::/64")
    assert.strictEqual(addressKey("2001:db8::1"), "2001:db8:0:0::/64")
    assert.isUndefined(addressKey("not-an-address"))
    assert.isUndefined(addressKey("203.0.113.256"))
  })

  it("X-Forwarded-For counts only from a trusted proxy, read from the right, past trusted hops", () => {
    const { list, invalid } = parseTrustedProxies(" 10.0.0.0/8 , ::1, 192.0.2.7")
    assert.deepStrictEqual(invalid, [])
    // Untrusted sender: its header is ignored.
    assert.strictEqual(clientKey("198.51.100.1", "203.0.113.9", list), "198.51.100.1")
    assert.strictEqual(clientKey("198.51.100.1", "203.0.113.9", undefined), "198.51.100.1")
    // Trusted: the right-most entry that is not a trusted proxy; what the client wrote left of it is never read.
    assert.strictEqual(clientKey("10.0.0.5", "1.1.1.1, 203.0.113.9", list), "203.0.113.9")
    assert.strictEqual(clientKey("::1", "203.0.113.9, 192.0.2.7, 10.9.9.9", list), "203.0.113.9")
    assert.strictEqual(clientKey("::ffff:10.0.0.5", "[2001:db8:7:8::1]:443", list), "2001:db8:7:8::/64")
    assert.strictEqual(clientKey("10.0.0.5", "203.0.113.9:5678", list), "203.0.113.9")
    // Every hop trusted: the left-most. No header: the proxy itself.
    assert.strictEqual(clientKey("10.0.0.5", "10.0.0.6, 10.0.0.7", list), "10.0.0.6")
    assert.strictEqual(clientKey("10.0.0.5", undefined, list), "10.0.0.5")
    // An entry that is no address: the socket's address, never the text (which would be a fresh budget).
    assert.strictEqual(clientKey("10.0.0.5", "203.0.113.9, garbage", list), "10.0.0.5")
    assert.strictEqual(clientKey(undefined, "203.0.113.9", list), "unknown")
  })

  it.effect("HERALD_TRUSTED_PROXIES that lists something else stops the start with a message naming it", () =>
    Effect.gen(function*() {
      const read = (value: string) => Effect.flip(throttleConfig.parse(ConfigProvider.fromUnknown({ HERALD_TRUSTED_PROXIES: value })))
      const error = yield* read("10.0.0.0/8, proxy.internal, 10.0.0.0/40")
      assert.match(String(error), /HERALD_TRUSTED_PROXIES.*"proxy\.internal", "10\.0\.0\.0\/40"/)
      const ok = yield* throttleConfig.parse(ConfigProvider.fromUnknown({}))
      assert.isUndefined(ok.trustedProxies)
      assert.strictEqual(ok.registerPerMinute, 60)
    }))
})

describe("address throttle", () => {
  const config = {
    registerPerMinute: 2,
    oauthPerMinute: 0,
    personApiPerMinute: 6,
    codesPerMinute: 2,
    authFailuresPerMinute: 2,
    signInPerMinute: 0,
    trustedProxies: undefined
  }
  const accept: Policy = { classes: ["personApi", "codes"], answer: "herald" }

  it("a request of two classes is taken from both or refused whole; the budget refills at limit a minute", () => {
    const throttle = makeAddressThrottle(config)
    const t0 = 1_000_000
    const first = throttle.take(accept, "a", t0)
    assert.isTrue(first.allowed)
    assert.strictEqual(first.reported!.limit, 2) // the tighter class is reported
    assert.isTrue(throttle.take(accept, "a", t0).allowed)
    const refused = throttle.take(accept, "a", t0)
    assert.isFalse(refused.allowed)
    assert.strictEqual(refused.refusedBy, "codes")
    assert.strictEqual(refused.reported!.retryAfterMs, 30_000)
    // The refused request took nothing from the Person API class: 4 of its 6 remain.
    assert.strictEqual(throttle.take({ classes: ["personApi"], answer: "herald" }, "a", t0).reported!.remaining, 3)
    // Another address has its own budget; a class that is off counts nothing.
    assert.isTrue(throttle.take(accept, "b", t0).allowed)
    assert.deepStrictEqual(throttle.take({ classes: ["oauth"], answer: "oauth" }, "a", t0), { allowed: true, reported: undefined })
    // 30 s later one code attempt is back; a minute later the whole budget, and the sweep forgets the key.
    assert.isTrue(throttle.take(accept, "a", t0 + 30_000).allowed)
    assert.isFalse(throttle.take(accept, "a", t0 + 30_000).allowed)
    const before = throttle.size()
    throttle.sweep(t0 + 120_000)
    assert.isBelow(throttle.size(), before)
    assert.strictEqual(throttle.size(), 0)
  })

  it("failed authentications: counted after the answer, refused once spent, nothing looked up while none failed", () => {
    const throttle = makeAddressThrottle(config)
    const t0 = 5_000_000
    assert.isFalse(throttle.anyFailures())
    throttle.failed("a", t0)
    assert.isTrue(throttle.anyFailures())
    assert.isUndefined(throttle.failuresSpent("a", t0))
    throttle.failed("a", t0)
    assert.strictEqual(throttle.failuresSpent("a", t0)!.retryAfterMs, 30_000)
    assert.isUndefined(throttle.failuresSpent("b", t0))
    assert.isUndefined(throttle.failuresSpent("a", t0 + 30_000))
    throttle.sweep(t0 + 60_000)
    assert.isFalse(throttle.anyFailures())
    assert.isFalse(makeAddressThrottle({ ...config, authFailuresPerMinute: 0 }).countsFailures)
  })
})
