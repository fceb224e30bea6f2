/** The rate limiter's arithmetic, at explicit instants. */
import { assert, describe, it } from "@effect/vitest"
import { Gcra } from "../../src/billing/Gcra.ts"
import { makeRateLimiter } from "../../src/billing/RateLimiter.ts"

describe("GCRA, 6 a minute", () => {
  it("allows a burst of the whole budget, then one every 10 s", () => {
    const limit = new Gcra(6)
    const t0 = 1_000_000
    for (let i = 0; i < 6; i++) {
      const d = limit.check("tok", t0)
      assert.isTrue(d.allowed)
      assert.strictEqual(d.remaining, 5 - i)
      limit.commit("tok", d.next)
    }
    const refused = limit.check("tok", t0)
    assert.isFalse(refused.allowed)
    assert.strictEqual(refused.remaining, 0)
    assert.strictEqual(refused.retryAfterMs, 10_000)
    assert.strictEqual(refused.resetMs, 60_000)
    assert.isFalse(limit.check("tok", t0 + 9_999).allowed)
    assert.isTrue(limit.check("tok", t0 + 10_000).allowed)
    // Other keys have their own budget.
    assert.strictEqual(limit.check("other", t0).remaining, 5)
  })

  it("peeks without taking, and forgets keys whose budget is whole again", () => {
    const limit = new Gcra(6)
    const d = limit.check("tok", 0)
    limit.commit("tok", d.next)
    assert.strictEqual(limit.peek("tok", 0).remaining, 5)
    assert.strictEqual(limit.peek("tok", 0).remaining, 5)
    assert.strictEqual(limit.peek("fresh", 0).remaining, 6)
    limit.sweep(5_000)
    assert.strictEqual(limit.size, 1)
    limit.sweep(10_000)
    assert.strictEqual(limit.size, 0)
  })
})

describe("the per-token limiter", () => {
  it("a send takes from both limits; a refusal takes from neither", () => {
    const limiter = makeRateLimiter({ requestsPerMinute: 10, sendsPerMinute: 2 })
    assert.strictEqual(limiter.take("tok", true, 0).reported?.remaining, 1)
    assert.strictEqual(limiter.take("tok", true, 0).reported?.remaining, 0)
    const refused = limiter.take("tok", true, 0)
    assert.isFalse(refused.allowed)
    assert.strictEqual(refused.reported?.limit, 2)
    // The refused send did not take from the overall budget: 10 − 2 left... minus nothing.
    assert.strictEqual(limiter.peek("tok", 0).requests?.remaining, 8)
    // Other requests still pass, reporting the overall limit.
    const read = limiter.take("tok", false, 0)
    assert.isTrue(read.allowed)
    assert.strictEqual(read.reported?.limit, 10)
  })

  it("takeSend (an inbound delivery) takes the send budget only, and passes when it is off", () => {
    const limiter = makeRateLimiter({ requestsPerMinute: 1, sendsPerMinute: 2 })
    assert.deepStrictEqual([limiter.takeSend("svc", 0).allowed, limiter.takeSend("svc", 0).allowed], [true, true])
    const refused = limiter.takeSend("svc", 0)
    assert.deepStrictEqual([refused.allowed, refused.reported?.limit], [false, 2])
    assert.strictEqual(limiter.peek("svc", 0).requests?.remaining, 1)
    const off = makeRateLimiter({ requestsPerMinute: 1, sendsPerMinute: 0 })
    for (let i = 0; i < 100; i++) assert.isTrue(off.takeSend("svc", 0).allowed)
    assert.isUndefined(off.takeSend("svc", 0).reported)
  })

  it("a limit of 0 is off", () => {
    const limiter = makeRateLimiter({ requestsPerMinute: 0, sendsPerMinute: 0 })
    for (let i = 0; i < 1000; i++) assert.isTrue(limiter.take("tok", true, 0).allowed)
    assert.isUndefined(limiter.take("tok", true, 0).reported)
    assert.deepStrictEqual(limiter.peek("tok", 0), { requests: undefined, sends: undefined })
  })
})
