/**
 * The Idempotency service on a real database: replay, reuse with another
 * body, a key in use, a failed first run, a claim whose process died, and the
 * 24-hour window.
 */
import { assert, layer } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { Idempotency, requestHash } from "../../src/idempotency/Idempotency.ts"
import { TestDatabase, uniqueId } from "../push/support.ts"

const TestLayer = Idempotency.layer.pipe(Layer.provideMerge(TestDatabase))

const Answer = Schema.Struct({ id: Schema.String, n: Schema.Number })

/** Work that answers how many times it has run. */
const counted = () => {
  let runs = 0
  return { work: Effect.sync(() => ({ id: `answer-${++runs}`, n: runs })), runs: () => runs }
}

const user = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const id = uniqueId("usr")
  yield* sql`INSERT INTO users (id, email, name) VALUES (${id}, ${`${id}@example.test`}, 'idem')`
  return id
})

layer(TestLayer, { timeout: "60 seconds", excludeTestServices: true })("idempotency keys", (it) => {
  it.effect("the same body replays the first answer without running again", () =>
    Effect.gen(function*() {
      const idem = yield* Idempotency
      const userId = yield* user
      const { runs, work } = counted()
      const ref = { userId, route: "POST /x", key: "k-1", body: { b: 1, a: [1, { y: 2, x: 1 }] } }
      const first = yield* idem.run(ref, Answer, work)
      assert.deepStrictEqual(first, { value: { id: "answer-1", n: 1 }, replayed: false })
      // Key order does not change the body.
      const again = yield* idem.run({ ...ref, body: { a: [1, { x: 1, y: 2 }], b: 1 } }, Answer, work)
      assert.deepStrictEqual(again, { value: { id: "answer-1", n: 1 }, replayed: true })
      assert.strictEqual(runs(), 1)
      // Keys are per account and per route.
      assert.isFalse((yield* idem.run({ ...ref, route: "POST /y" }, Answer, work)).replayed)
      assert.isFalse((yield* idem.run({ ...ref, userId: yield* user }, Answer, work)).replayed)
    }))

  it.effect("create: without a key the work runs each time; with one, a replay is the answer `replay` makes of the first", () =>
    Effect.gen(function*() {
      const idem = yield* Idempotency
      const { runs, work } = counted()
      const replay = (value: typeof Answer.Type) => ({ ...value, idempotent: true as const })
      const unkeyed = { userId: yield* user, route: "POST /x", key: undefined, body: { a: 1 } }
      assert.deepStrictEqual(yield* idem.create(unkeyed, Answer, work, replay), { id: "answer-1", n: 1 })
      assert.deepStrictEqual(yield* idem.create(unkeyed, Answer, work, replay), { id: "answer-2", n: 2 })
      const keyed = { ...unkeyed, key: "k-create" }
      assert.deepStrictEqual(yield* idem.create(keyed, Answer, work, replay), { id: "answer-3", n: 3 })
      assert.deepStrictEqual(yield* idem.create(keyed, Answer, work, replay), { id: "answer-3", n: 3, idempotent: true })
      assert.strictEqual(runs(), 3)
    }))

  it.effect("another body with the same key answers IDEMPOTENCY_KEY_REUSED", () =>
    Effect.gen(function*() {
      const idem = yield* Idempotency
      const ref = { userId: yield* user, route: "POST /x", key: "k-2", body: { a: 1 } }
      yield* idem.run(ref, Answer, Effect.succeed({ id: "a", n: 1 }))
      const error = yield* Effect.flip(idem.run({ ...ref, body: { a: 2 } }, Answer, Effect.succeed({ id: "b", n: 2 })))
      assert.strictEqual(error._tag, "IdempotencyKeyReused")
    }))

  it.effect("a retry while the first request runs answers IDEMPOTENCY_KEY_IN_USE", () =>
    Effect.gen(function*() {
      const idem = yield* Idempotency
      const ref = { userId: yield* user, route: "POST /x", key: "k-3", body: { a: 1 } }
      const started = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const first = yield* Effect.forkChild(idem.run(ref, Answer, Deferred.succeed(started, undefined).pipe(
        Effect.andThen(Deferred.await(release)),
        Effect.as({ id: "first", n: 1 })
      )))
      yield* Deferred.await(started)
      const error = yield* Effect.flip(idem.run(ref, Answer, Effect.succeed({ id: "second", n: 2 })))
      assert.strictEqual(error._tag, "IdempotencyKeyInUse")
      yield* Deferred.succeed(release, undefined)
      assert.strictEqual((yield* Fiber.join(first)).value.id, "first")
      assert.deepStrictEqual(yield* idem.run(ref, Answer, Effect.succeed({ id: "third", n: 3 })), {
        value: { id: "first", n: 1 },
        replayed: true
      })
    }))

  it.effect("a failed first run releases the key", () =>
    Effect.gen(function*() {
      const idem = yield* Idempotency
      const ref = { userId: yield* user, route: "POST /x", key: "k-4", body: { a: 1 } }
      const failed = yield* Effect.flip(idem.run(ref, Answer, Effect.fail("boom" as const)))
      assert.strictEqual(failed, "boom")
      const retried = yield* idem.run(ref, Answer, Effect.succeed({ id: "retry", n: 2 }))
      assert.deepStrictEqual(retried, { value: { id: "retry", n: 2 }, replayed: false })
    }))

  it.effect("a claim left running by a dead process is taken over once its lock lapses", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const idem = yield* Idempotency
      const userId = yield* user
      yield* sql`INSERT INTO idempotency_keys (user_id, route, key, request_hash, state, locked_until)
                 VALUES (${userId}, 'POST /x', 'k-5', ${requestHash({ a: 1 })}, 'running', now() + interval '1 minute')`
      const ref = { userId, route: "POST /x", key: "k-5", body: { a: 1 } }
      assert.strictEqual((yield* Effect.flip(idem.run(ref, Answer, Effect.succeed({ id: "x", n: 1 }))))._tag, "IdempotencyKeyInUse")
      yield* sql`UPDATE idempotency_keys SET locked_until = now() - interval '1 second' WHERE user_id = ${userId}`
      assert.deepStrictEqual(yield* idem.run(ref, Answer, Effect.succeed({ id: "x", n: 1 })), {
        value: { id: "x", n: 1 },
        replayed: false
      })
    }))

  it.effect("after 24 hours the key is free again, whatever the body", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const idem = yield* Idempotency
      const ref = { userId: yield* user, route: "POST /x", key: "k-6", body: { a: 1 } }
      yield* idem.run(ref, Answer, Effect.succeed({ id: "old", n: 1 }))
      yield* sql`UPDATE idempotency_keys SET created_at = now() - interval '25 hours' WHERE user_id = ${ref.userId}`
      const fresh = yield* idem.run({ ...ref, body: { a: 2 } }, Answer, Effect.succeed({ id: "new", n: 2 }))
      assert.deepStrictEqual(fresh, { value: { id: "new", n: 2 }, replayed: false })
    }))
})
