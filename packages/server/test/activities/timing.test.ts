/**
 * The live-activity rules that depend on time, on a controllable clock: the
 * milestone budget at its boundaries (the 5th milestone within a minute and
 * the 21st within an hour fall back to priority 5, each allowed again from
 * exactly the moment the oldest grant leaves its window) and pacing.
 */
import { assert, describe, it } from "@effect/vitest"
import { Clock, Duration, Effect, Ref } from "effect"
import { TestClock } from "effect/testing"
import { milestoneAllowed } from "../../src/activities/Budget.ts"
import { nextSlot, pacedUntil } from "../../src/activities/Pacing.ts"
import { budgetWarnings } from "../../src/activities/TextBudgets.ts"

/** Asks for a milestone now; records the grant when allowed. */
const ask = (grants: Ref.Ref<ReadonlyArray<number>>) =>
  Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const allowed = milestoneAllowed(yield* Ref.get(grants), now)
    if (allowed) yield* Ref.update(grants, (g) => [...g, now])
    return allowed
  })

describe("milestone budget", () => {
  it.effect("4 per rolling minute: the 5th waits until the 1st is a minute old", () =>
    Effect.gen(function*() {
      const grants = yield* Ref.make<ReadonlyArray<number>>([])
      for (let i = 0; i < 4; i++) {
        assert.isTrue(yield* ask(grants), `milestone ${i + 1}`)
        yield* TestClock.adjust(Duration.seconds(10))
      }
      // t = 40 s: four grants in the last minute.
      assert.isFalse(yield* ask(grants))
      yield* TestClock.adjust(Duration.millis(19_999)) // t = 59.999 s
      assert.isFalse(yield* ask(grants))
      yield* TestClock.adjust(Duration.millis(1)) // t = 60 s: the first grant left the window
      assert.isTrue(yield* ask(grants))
      assert.isFalse(yield* ask(grants))
    }))

  it.effect("20 per rolling hour: the 21st waits until the 1st is an hour old", () =>
    Effect.gen(function*() {
      const grants = yield* Ref.make<ReadonlyArray<number>>([])
      // Four per minute, 20 over five minutes.
      for (let i = 0; i < 20; i++) {
        assert.isTrue(yield* ask(grants), `milestone ${i + 1}`)
        yield* TestClock.adjust(Duration.seconds(15))
      }
      yield* TestClock.adjust(Duration.minutes(10))
      assert.isFalse(yield* ask(grants), "the 21st within the hour")
      const firstAt = (yield* Ref.get(grants))[0]!
      const now = yield* Clock.currentTimeMillis
      yield* TestClock.adjust(Duration.millis(firstAt + 3_600_000 - now - 1))
      assert.isFalse(yield* ask(grants), "one millisecond before the hour")
      yield* TestClock.adjust(Duration.millis(1))
      assert.isTrue(yield* ask(grants), "exactly an hour after the first")
    }))
})

describe("pacing", () => {
  it.effect("one routine update per device per interval, exactly at the boundary", () =>
    Effect.gen(function*() {
      let last: number | undefined
      const send = Effect.map(Clock.currentTimeMillis, (now) => {
        const slot = nextSlot(last, 1000, now)
        if (slot === now) last = now
        return slot - now
      })
      assert.strictEqual(yield* send, 0, "the first goes at once")
      yield* TestClock.adjust(Duration.millis(400))
      assert.strictEqual(yield* send, 600, "the next waits for the rest of the interval")
      yield* TestClock.adjust(Duration.millis(599))
      assert.strictEqual(yield* send, 1, "one millisecond early")
      yield* TestClock.adjust(Duration.millis(1))
      assert.strictEqual(yield* send, 0, "exactly one interval after the last send")
      yield* TestClock.adjust(Duration.seconds(5))
      assert.strictEqual(yield* send, 0, "an idle device is not held back")
    }))
})

describe("a paced routine update", () => {
  it("needs only a wake-up at the first of its devices' slots, and none when one may send now", () => {
    const now = 10_000
    assert.strictEqual(pacedUntil([10_900, 10_600], now), 10_600)
    assert.isUndefined(pacedUntil([now, 10_900], now), "one device may send now: the actor looks at the queue")
    assert.strictEqual(pacedUntil([], now), Number.POSITIVE_INFINITY, "no devices: nothing to wake for")
  })
})

describe("visible-character budgets", () => {
  it("warns per layout without touching the text; compact status rules", () => {
    assert.deepStrictEqual(budgetWarnings({ title: "Deploying" }).length, 0)
    const long = budgetWarnings({ title: "x".repeat(33), status: "y".repeat(37), detail: "z".repeat(101) })
    assert.deepStrictEqual(long.map((w) => [w.field, w.layout, w.length, w.budget]), [
      ["title", "standard", 33, 32],
      ["status", "standard", 37, 36],
      ["detail", "standard", 101, 100],
      ["status", "compact", 37, 8]
    ])
    // A subtitle takes line 2; progress takes the compact slot.
    assert.deepStrictEqual(
      budgetWarnings({ title: "t", layout: "ring", subtitle: "s".repeat(31), status: "long status", progress: 0.5 })
        .map((w) => [w.field, w.layout, w.budget]),
      [["subtitle", "ring", 30]]
    )
    assert.deepStrictEqual(
      budgetWarnings({ title: "t".repeat(25), layout: "hero" }).map((w) => [w.field, w.budget]),
      [["title", 24]]
    )
    // Terminal never shows status in compact; an emoji counts as one character.
    assert.deepStrictEqual(
      budgetWarnings({ title: "🚀".repeat(36), layout: "terminal", status: "ok" }).map((w) => [w.field, w.layout, w.budget]),
      [["status", "compact", 0]]
    )
  })
})
