/**
 * `afterCommit` of the unit of work, what tells open inbox streams of a
 * change: it runs once the rows are committed — after the unit's statement,
 * after the caller's transaction, at once with neither — and never for a
 * unit or transaction that failed. Checked with an inbox item, whose signal
 * must not reach a stream before the item can be read.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { makePerson, TestServerLayer } from "../../../../test/support/server.ts"
import { afterCommit, UnitOfWork } from "../../src/db/UnitOfWork.ts"
import { InboxWrites } from "../../src/inbox/InboxWrites.ts"
import { makeId } from "../../src/lib/Ids.ts"

/** Notes how many inbox items the person has when it runs (a new connection after a commit). */
const noteCount = (sql: SqlClient.SqlClient, userId: string, seen: Array<number>): Effect.Effect<void> =>
  sql<{ n: number }>`SELECT count(*)::int AS n FROM inbox_items WHERE user_id = ${userId}`.pipe(
    Effect.map((rows) => void seen.push(rows[0]!.n)),
    Effect.orDie
  )

const item = (userId: string) =>
  Effect.map(makeId("anot"), (itemId) => ({ userId, origin: "notification" as const, itemId, sourceName: "ci", title: "t", body: "b" }))

layer(TestServerLayer, { timeout: "60 seconds", excludeTestServices: true })("after commit", (it) => {
  it.effect("runs after the unit's statement, when the rows can be read; not when the unit fails", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const unit = yield* UnitOfWork
      const inbox = yield* InboxWrites
      const { person } = yield* makePerson()
      const seen: Array<number> = []
      const note = noteCount(sql, person.id, seen)
      yield* unit.commit(Effect.gen(function*() {
        yield* inbox.add([yield* item(person.id)])
        yield* afterCommit(sql, note)
        assert.deepStrictEqual(seen, [], "not while the unit is open")
      }))
      assert.deepStrictEqual(seen, [1])

      const failed = yield* unit.commit(Effect.gen(function*() {
        yield* inbox.add([yield* item(person.id)])
        yield* afterCommit(sql, note)
        return yield* Effect.fail("refused" as const)
      })).pipe(Effect.flip)
      assert.strictEqual(failed, "refused")
      assert.deepStrictEqual(seen, [1])
    }))

  it.effect("outside a unit: after the caller's transaction commits, never after a rollback; at once without one", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const inbox = yield* InboxWrites
      const { person } = yield* makePerson()
      const seen: Array<number> = []
      const note = noteCount(sql, person.id, seen)
      yield* sql.withTransaction(Effect.gen(function*() {
        yield* inbox.insert([yield* item(person.id)])
        yield* afterCommit(sql, note)
        assert.deepStrictEqual(seen, [])
      }))
      assert.deepStrictEqual(seen, [1])
      yield* sql.withTransaction(Effect.gen(function*() {
        yield* inbox.insert([yield* item(person.id)])
        yield* afterCommit(sql, note)
        return yield* Effect.fail("rolled back" as const)
      })).pipe(Effect.flip)
      assert.deepStrictEqual(seen, [1])
      yield* afterCommit(sql, note)
      assert.deepStrictEqual(seen, [1, 1])
    }))
})
