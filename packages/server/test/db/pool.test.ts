/**
 * The pool pipelines statements of many fibers on each connection
 * (`multiplex`), so one statement waiting on a row lock holds up those queued
 * behind it on its connection. That is safe only while a transaction keeps a
 * connection to itself: the transaction holding the lock must never queue
 * behind a statement that waits for it.
 */
import { assert, layer } from "@effect/vitest"
import { Deferred, Effect, Fiber, Layer, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import { TestSqlLayer, usingPostgres } from "../../../../test/support/database.ts"

const WAITERS = 40

layer(Layer.mergeAll(TestSqlLayer), { excludeTestServices: true, timeout: "60 seconds" })("database pool", (it) => {
  it.effect("a transaction holding a row lock commits while pooled statements wait on that lock", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE TABLE pool_probe (id int PRIMARY KEY, n int NOT NULL)`
      yield* sql`INSERT INTO pool_probe VALUES (1, 0), (2, 0)`
      const locked = yield* Deferred.make<void>()
      const waitersQueued = yield* Deferred.make<void>()

      const transaction = yield* sql.withTransaction(Effect.gen(function*() {
        yield* sql`UPDATE pool_probe SET n = n + 1 WHERE id = 1`
        yield* Deferred.succeed(locked, undefined)
        yield* Deferred.await(waitersQueued)
        // On PostgreSQL, go on only once statements outside wait on this row lock (read on this
        // transaction's own connection); PGlite has one connection, which this transaction holds.
        yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM pg_locks WHERE NOT granted`.pipe(
          Effect.repeat({ schedule: Schedule.spaced("10 millis"), until: (rows) => !usingPostgres || rows[0]!.n > 0 })
        )
        // More statements of the transaction: each must reach the database past the blocked ones.
        for (let i = 0; i < 5; i++) yield* sql`UPDATE pool_probe SET n = n + 1 WHERE id = 2`
      })).pipe(Effect.forkChild)

      yield* Deferred.await(locked)
      const waiters = yield* Effect.forEach(
        Array.from({ length: WAITERS }),
        () => sql`UPDATE pool_probe SET n = n + 1 WHERE id = 1`,
        { concurrency: "unbounded", discard: true }
      ).pipe(Effect.forkChild)
      yield* Deferred.succeed(waitersQueued, undefined)

      yield* Fiber.join(transaction).pipe(Effect.timeout("20 seconds"))
      yield* Fiber.join(waiters).pipe(Effect.timeout("20 seconds"))
      const rows = yield* sql<{ id: number; n: number }>`SELECT id, n FROM pool_probe ORDER BY id`
      assert.deepStrictEqual(rows.map((r) => [r.id, r.n]), [[1, WAITERS + 1], [2, 5]])
    }))
})
