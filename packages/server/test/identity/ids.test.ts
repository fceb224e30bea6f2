/**
 * Ids sort by creation: by their millisecond, and within one millisecond by the order one process
 * made them (lists ordered by id, such as a device's sandbox pushes, rely on it).
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { makeId } from "../../src/lib/Ids.ts"

describe("makeId", () => {
  it.effect("ids made within one millisecond sort in the order they were made, and unique", () =>
    Effect.gen(function*() {
      // The test clock stands still: every id below shares its millisecond.
      const ids = yield* Effect.forEach(Array.from({ length: 2_000 }), () => makeId("sbx"))
      assert.deepStrictEqual([...ids].sort(), ids)
      assert.strictEqual(new Set(ids).size, ids.length)
      assert.strictEqual(new Set(ids.map((id) => id.slice(0, 14))).size, 1)
    }))

  it.effect("an id of a later millisecond sorts after every id of the one before", () =>
    Effect.gen(function*() {
      const before = yield* Effect.forEach(Array.from({ length: 50 }), () => makeId("evt"))
      yield* TestClock.adjust("1 millis")
      const after = yield* makeId("evt")
      assert.isTrue(before.every((id) => id < after))
      assert.match(after, /^evt_[0-9a-hjkmnp-tv-z]{26}$/)
    }))
})
