/** Taking several units at once (an MCP batch): all or none, at explicit instants. */
import { assert, describe, it } from "@effect/vitest"
import { Gcra } from "../../src/billing/Gcra.ts"
import { makeRateLimiter } from "../../src/billing/RateLimiter.ts"

describe("GCRA with a cost, 6 a minute", () => {
  it("takes n units as n single takes would, or refuses them all", () => {
    const limit = new Gcra(6)
    const t0 = 1_000_000
    const four = limit.check("tok", t0, 4)
    assert.deepStrictEqual([four.allowed, four.remaining], [true, 2])
    limit.commit("tok", four.next)
    const three = limit.check("tok", t0, 3)
    assert.isFalse(three.allowed)
    // One unit comes back every 10 s: three fit once one has.
    assert.strictEqual(three.retryAfterMs, 10_000)
    assert.isTrue(limit.check("tok", t0 + 10_000, 3).allowed)
    const two = limit.check("tok", t0, 2)
    assert.deepStrictEqual([two.allowed, two.remaining], [true, 0])
    // The default cost is one, as before.
    assert.strictEqual(new Gcra(6).check("tok", t0).remaining, 5)
  })

  it("the whole budget fits at once for every limit (no rounding refusal); more never does", () => {
    for (let limit = 1; limit <= 500; limit++) {
      const gcra = new Gcra(limit)
      const whole = gcra.check("tok", 0, limit)
      assert.isTrue(whole.allowed, `limit ${limit}`)
      assert.strictEqual(whole.remaining, 0, `limit ${limit}`)
    }
    const gcra = new Gcra(5)
    const over = gcra.check("tok", 0, 6)
    assert.isFalse(over.allowed)
    // Never fits: the best advice is when the budget is whole (now, untouched).
    assert.strictEqual(over.retryAfterMs, 0)
    gcra.commit("tok", gcra.check("tok", 0, 1).next)
    assert.strictEqual(gcra.check("tok", 0, 6).retryAfterMs, 12_000)
  })
})

describe("takeUnits", () => {
  it("takes requests and sends together, all or none, and names the budget that refused", () => {
    const limiter = makeRateLimiter({ requestsPerMinute: 10, sendsPerMinute: 3 })
    const batch = limiter.takeUnits("tok", { requests: 4, sends: 2 }, 0)
    assert.isTrue(batch.allowed)
    // The tighter budget is reported: one send left.
    assert.deepStrictEqual([batch.reported?.limit, batch.reported?.remaining], [3, 1])
    const tooManySends = limiter.takeUnits("tok", { requests: 2, sends: 2 }, 0)
    assert.deepStrictEqual([tooManySends.allowed, tooManySends.refused], [false, "sends"])
    const tooManyRequests = limiter.takeUnits("tok", { requests: 7, sends: 0 }, 0)
    assert.deepStrictEqual([tooManyRequests.allowed, tooManyRequests.refused], [false, "requests"])
    // Neither refusal took anything.
    const peeked = limiter.peek("tok", 0)
    assert.deepStrictEqual([peeked.requests?.remaining, peeked.sends?.remaining], [6, 1])
    // Nothing to take passes, reporting nothing; a limit that is off takes nothing.
    assert.deepStrictEqual(limiter.takeUnits("tok", { requests: 0, sends: 0 }, 0), { allowed: true, reported: undefined })
    const off = makeRateLimiter({ requestsPerMinute: 0, sendsPerMinute: 2 })
    assert.isTrue(off.takeUnits("tok", { requests: 1000, sends: 2 }, 0).allowed)
    assert.isFalse(off.takeUnits("tok", { requests: 1, sends: 1 }, 0).allowed)
  })
})
