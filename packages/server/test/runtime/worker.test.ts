/**
 * The supervision helper on TestClock: a failing or dying loop body runs again
 * after the backoff (not before), a failed periodic pass does not stop later
 * passes, and closing the layer's scope interrupts the worker without a
 * warning.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Layer, Logger, Option, Queue, Ref, Scope } from "effect"
import { TestClock } from "effect/testing"
import * as Worker from "../../src/runtime/Worker.ts"

/** Captures warning messages so a test can see what a worker logged. */
const captureWarnings = Effect.gen(function*() {
  const warnings = yield* Ref.make<ReadonlyArray<string>>([])
  const logger = Logger.make<unknown, void>(({ logLevel, message }) => {
    if (logLevel === "Warn") Effect.runSync(Ref.update(warnings, (all) => [...all, String(message)]))
  })
  return { warnings, loggerLayer: Logger.layer([logger]) }
})

/** Builds a worker layer in a scope of its own, so the test decides when it closes. */
const start = (worker: Layer.Layer<never>) =>
  Effect.gen(function*() {
    const scope = yield* Scope.make()
    yield* Layer.buildWithScope(worker, scope)
    return scope
  })

const nothingYet = <A>(queue: Queue.Queue<A>) =>
  Effect.gen(function*() {
    yield* Effect.yieldNow
    assert.isTrue(Option.isNone(yield* Queue.poll(queue)))
  })

describe("Worker.loop", () => {
  it.effect("runs a failed body again after the backoff, and a dead one too", () =>
    Effect.gen(function*() {
      const { warnings, loggerLayer } = yield* captureWarnings
      const runs = yield* Queue.unbounded<number>()
      const count = yield* Ref.make(0)
      const body = Effect.gen(function*() {
        const n = yield* Ref.updateAndGet(count, (n) => n + 1)
        yield* Queue.offer(runs, n)
        if (n === 1) return yield* Effect.fail("first run fails")
        if (n === 2) return yield* Effect.die("second run dies")
        return yield* Effect.never
      })
      const scope = yield* start(Worker.loop("test-loop", body).pipe(Layer.provide(loggerLayer)))
      assert.strictEqual(yield* Queue.take(runs), 1)
      // The first backoff is 100 ms ±20%: nothing before 80 ms, a restart by 120 ms.
      yield* TestClock.adjust("79 millis")
      yield* nothingYet(runs)
      yield* TestClock.adjust("42 millis") // t = 121 ms
      assert.strictEqual(yield* Queue.take(runs), 2)
      // Run 2 began within [80, 120] ms and died; the second backoff is 200 ms ±20%,
      // so run 3 begins within [240, 360] ms.
      yield* TestClock.adjust("118 millis") // t = 239 ms
      yield* nothingYet(runs)
      yield* TestClock.adjust("122 millis") // t = 361 ms
      assert.strictEqual(yield* Queue.take(runs), 3)
      const logged = yield* Ref.get(warnings)
      assert.strictEqual(logged.length, 2)
      assert.isTrue(logged.every((message) => message.includes("worker test-loop failed")))
      yield* Scope.close(scope, Exit.void)
    }))

  it.effect("runs a body that returns again at once, resetting the backoff", () =>
    Effect.gen(function*() {
      const runs = yield* Queue.unbounded<number>()
      const count = yield* Ref.make(0)
      const body = Effect.gen(function*() {
        const n = yield* Ref.updateAndGet(count, (n) => n + 1)
        yield* Queue.offer(runs, n)
        if (n === 1) return yield* Effect.fail("fails once")
        if (n === 4) return yield* Effect.never
      })
      const scope = yield* start(Worker.loop("test-returns", body))
      assert.strictEqual(yield* Queue.take(runs), 1)
      yield* TestClock.adjust("120 millis")
      // Runs 2 and 3 return normally: each next run follows without any clock movement.
      assert.deepStrictEqual([yield* Queue.take(runs), yield* Queue.take(runs), yield* Queue.take(runs)], [2, 3, 4])
      yield* Scope.close(scope, Exit.void)
    }))

  it.effect("is interrupted quietly when its scope closes", () =>
    Effect.gen(function*() {
      const { warnings, loggerLayer } = yield* captureWarnings
      const started = yield* Queue.unbounded<void>()
      const interrupted = yield* Ref.make(false)
      const body = Queue.offer(started, undefined).pipe(
        Effect.andThen(Effect.never),
        Effect.onInterrupt(() => Ref.set(interrupted, true))
      )
      const scope = yield* start(Worker.loop("test-interrupt", body).pipe(Layer.provide(loggerLayer)))
      yield* Queue.take(started)
      yield* Scope.close(scope, Exit.void)
      assert.isTrue(yield* Ref.get(interrupted))
      yield* TestClock.adjust("1 minute")
      assert.isTrue(Option.isNone(yield* Queue.poll(started)))
      assert.deepStrictEqual(yield* Ref.get(warnings), [])
    }))
})

describe("Worker.once", () => {
  it.effect("runs again after a failure until it succeeds, then never again", () =>
    Effect.gen(function*() {
      const runs = yield* Queue.unbounded<number>()
      const count = yield* Ref.make(0)
      const effect = Effect.gen(function*() {
        const n = yield* Ref.updateAndGet(count, (n) => n + 1)
        yield* Queue.offer(runs, n)
        if (n === 1) return yield* Effect.fail("first run fails")
      })
      const scope = yield* start(Worker.once("test-once", effect))
      assert.strictEqual(yield* Queue.take(runs), 1)
      yield* TestClock.adjust("120 millis")
      assert.strictEqual(yield* Queue.take(runs), 2)
      yield* TestClock.adjust("1 hour")
      yield* nothingYet(runs)
      yield* Scope.close(scope, Exit.void)
    }))
})

describe("Worker.periodic", () => {
  it.effect("keeps running passes after one fails", () =>
    Effect.gen(function*() {
      const { warnings, loggerLayer } = yield* captureWarnings
      const passes = yield* Queue.unbounded<number>()
      const count = yield* Ref.make(0)
      const pass = Effect.gen(function*() {
        const n = yield* Ref.updateAndGet(count, (n) => n + 1)
        yield* Queue.offer(passes, n)
        if (n === 2) return yield* Effect.fail("second pass fails")
      })
      const scope = yield* start(Worker.periodic("test-periodic", "1 minute", pass).pipe(Layer.provide(loggerLayer)))
      assert.strictEqual(yield* Queue.take(passes), 1)
      yield* TestClock.adjust("59 seconds")
      yield* nothingYet(passes)
      yield* TestClock.adjust("1 second")
      assert.strictEqual(yield* Queue.take(passes), 2)
      // The failed pass is followed by the next one a period later, and so on.
      yield* TestClock.adjust("1 minute")
      assert.strictEqual(yield* Queue.take(passes), 3)
      yield* TestClock.adjust("1 minute")
      assert.strictEqual(yield* Queue.take(passes), 4)
      const logged = yield* Ref.get(warnings)
      assert.strictEqual(logged.length, 1)
      assert.include(logged[0], "worker test-periodic failed")
      yield* Scope.close(scope, Exit.void)
    }))

  it.effect("stops when its scope closes", () =>
    Effect.gen(function*() {
      const passes = yield* Queue.unbounded<void>()
      const scope = yield* start(Worker.periodic("test-stop", "1 second", Queue.offer(passes, undefined)))
      yield* Queue.take(passes)
      yield* Scope.close(scope, Exit.void)
      yield* TestClock.adjust("1 minute")
      assert.isTrue(Option.isNone(yield* Queue.poll(passes)))
    }))
})
