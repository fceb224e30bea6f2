/**
 * `EntityCalls.callUntil`, the long call that follows its entity across
 * runners, on the test clock with scripted calls: a call cut by a handover
 * (ended by an interruption alone, as the runtime ends an
 * `InterruptOnTermination` rpc whose entity stops) is issued again for what
 * is left of the time; the runtime's refusals still answer 503 and the
 * entity's own failures pass through, each once; the deadline bounds it all;
 * and the caller's own interruption is not taken for a handover. The real
 * handovers are the e2e suite's (test/e2e/cluster/waits.test.ts).
 */
import { assert, describe, it } from "@effect/vitest"
import { Cause, Clock, Effect, Exit, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { ClusterError, EntityAddress, EntityId, EntityType, ShardId } from "effect/cluster"
import { callUntil } from "../../src/cluster/EntityCalls.ts"

/** How the runtime ends a call whose entity stopped under it. */
const cut = Effect.failCause(Cause.interrupt())

/** A scripted call: each issue takes the next step and records the time it was given. */
const scripted = <A, E>(steps: ReadonlyArray<Effect.Effect<A, E>>) => {
  const given: Array<number> = []
  const issue = (remainingMillis: number) =>
    Effect.suspend(() => {
      given.push(remainingMillis)
      return steps[Math.min(given.length, steps.length) - 1]!
    })
  return { given, issue }
}

const address = EntityAddress.make({
  shardId: ShardId.make("default", 1),
  entityType: EntityType.make("Prompt"),
  entityId: EntityId.make("int_1")
})

describe("EntityCalls.callUntil", () => {
  it.effect("issues a call cut by a handover again, for what is left of the time", () =>
    Effect.gen(function*() {
      const start = yield* Clock.currentTimeMillis
      const { given, issue } = scripted([Effect.delay(cut, "2 seconds"), cut, Effect.succeed(true)])
      const fiber = yield* Effect.forkChild(callUntil(start + 30_000, issue, false))
      yield* TestClock.adjust("3 seconds")
      assert.isTrue(yield* Fiber.join(fiber))
      assert.deepStrictEqual(given, [30_000, 27_900, 27_800])
    }))

  it.effect("a call cut again and again answers as its own timeout would, at the deadline", () =>
    Effect.gen(function*() {
      const start = yield* Clock.currentTimeMillis
      // Cut a second after each issue, unless its own timeout comes first.
      const given: Array<number> = []
      const issue = (ms: number) =>
        Effect.suspend(() => {
          given.push(ms)
          return ms > 1000 ? Effect.delay(cut, "1 second") : Effect.as(Effect.sleep(ms), false)
        })
      const fiber = yield* Effect.forkChild(callUntil(start + 5_000, issue, true))
      yield* TestClock.adjust("4900 millis")
      assert.isUndefined(fiber.pollUnsafe())
      yield* TestClock.adjust("100 millis")
      assert.isFalse(yield* Fiber.join(fiber))
      assert.deepStrictEqual(given, [5000, 3900, 2800, 1700, 600])
    }))

  it.effect("a call the runtime holds past the deadline answers a second after it", () =>
    Effect.gen(function*() {
      const start = yield* Clock.currentTimeMillis
      const fiber = yield* Effect.forkChild(callUntil(start + 5_000, () => Effect.never, "timed out"))
      yield* TestClock.adjust("5900 millis")
      assert.isUndefined(fiber.pollUnsafe())
      yield* TestClock.adjust("100 millis")
      assert.strictEqual(yield* Fiber.join(fiber), "timed out")
    }))

  it.effect("the runtime's refusals answer 503 and the entity's own failures pass through, each issued once", () =>
    Effect.gen(function*() {
      const start = yield* Clock.currentTimeMillis
      const refused = scripted<boolean, ClusterError.MailboxFull>([Effect.fail(new ClusterError.MailboxFull({ address }))])
      const unavailable = yield* Effect.flip(callUntil(start + 30_000, refused.issue, false))
      assert.strictEqual(unavailable._tag, "ServiceUnavailable")
      assert.strictEqual(refused.given.length, 1)

      const failing = scripted<boolean, string>([Effect.fail("not pending")])
      assert.strictEqual(yield* Effect.flip(callUntil(start + 30_000, failing.issue, false)), "not pending")
      assert.strictEqual(failing.given.length, 1)

      const dying = scripted<boolean, never>([Effect.die("broken")])
      const exit = yield* Effect.exit(callUntil(start + 30_000, dying.issue, false))
      assert.isTrue(Exit.isFailure(exit) && Cause.hasDies(exit.cause))
      assert.strictEqual(dying.given.length, 1)
    }))

  it.effect("the caller's own interruption ends it: nothing is issued again", () =>
    Effect.gen(function*() {
      const start = yield* Clock.currentTimeMillis
      const { given, issue } = scripted([Effect.never])
      const fiber = yield* Effect.forkChild(callUntil(start + 30_000, issue, false))
      yield* TestClock.adjust("1 second")
      yield* Fiber.interrupt(fiber)
      yield* TestClock.adjust("40 seconds")
      assert.strictEqual(given.length, 1)
      assert.isTrue(Exit.hasInterrupts(yield* Fiber.await(fiber)))
    }))
})
