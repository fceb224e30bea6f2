/**
 * `sendNow`'s bounded wait (push/Outbox.ts `awaitAtMost`), on TestClock: it
 * answers when the sends end or when the request wait is over, whichever is
 * first, and never stops the sends themselves.
 */
import { assert, describe, it } from "@effect/vitest"
import { Deferred, Duration, Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { awaitAtMost } from "../../src/push/Outbox.ts"

const wait = Duration.seconds(5)

/** Work that runs until `finish` completes, and a waiter on it. */
const started = Effect.gen(function*() {
  const finish = yield* Deferred.make<void>()
  const work = yield* Effect.forkChild(Deferred.await(finish))
  const waiter = yield* Effect.forkChild(awaitAtMost(work, wait))
  return { finish, work, waiter }
})

describe("awaitAtMost", () => {
  it.effect("answers as soon as the fiber ends, before the wait is over", () =>
    Effect.gen(function*() {
      const { finish, waiter, work } = yield* started
      yield* TestClock.adjust("1 second")
      assert.isUndefined(waiter.pollUnsafe(), "still waiting while the work runs")
      yield* Deferred.succeed(finish, undefined)
      yield* Fiber.join(waiter)
      assert.isDefined(work.pollUnsafe())
    }))

  it.effect("answers when the wait is over and leaves the fiber running", () =>
    Effect.gen(function*() {
      const { finish, waiter, work } = yield* started
      yield* TestClock.adjust("4999 millis")
      assert.isUndefined(waiter.pollUnsafe(), "not before the wait is over")
      yield* TestClock.adjust("1 millis")
      yield* Fiber.join(waiter)
      assert.isUndefined(work.pollUnsafe(), "the work goes on")
      yield* Deferred.succeed(finish, undefined)
      yield* Fiber.join(work)
    }))

  it.effect("answers at once for a fiber that has already ended", () =>
    Effect.gen(function*() {
      const work = yield* Effect.forkChild(Effect.void)
      yield* Fiber.join(work)
      yield* awaitAtMost(work, wait)
    }))

  it.effect("a waiter interrupted leaves the fiber running", () =>
    Effect.gen(function*() {
      const { finish, waiter, work } = yield* started
      yield* Fiber.interrupt(waiter)
      assert.isUndefined(work.pollUnsafe())
      yield* Deferred.succeed(finish, undefined)
      yield* Fiber.join(work)
    }))
})
