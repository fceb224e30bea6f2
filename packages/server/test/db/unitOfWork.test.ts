/**
 * The unit of work: the rows a request enlists are written at its commit, all
 * in one statement (one transaction: the rows share their `xmin`), together
 * with the units of concurrent requests; a failing body writes nothing; a
 * unit inside a transaction is that transaction's; a unit whose rows break a
 * foreign key fails alone, not the units it was grouped with.
 */
import { assert, layer } from "@effect/vitest"
import { Cause, Effect, Option } from "effect"
import { SqlClient } from "effect/sql"
import { makePerson, TestServerLayer } from "../../../../test/support/server.ts"
import { UnitOfWork } from "../../src/db/UnitOfWork.ts"
import { ActivityFeed } from "../../src/inbox/ActivityFeed.ts"
import { InboxWrites } from "../../src/inbox/InboxWrites.ts"
import { makeId } from "../../src/lib/Ids.ts"

/** The transaction ids that wrote the person's inbox items and feed entries (one per row). */
const writers = (userId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ tx: string }>`
      SELECT xmin::text AS tx FROM inbox_items WHERE user_id = ${userId}
      UNION ALL SELECT xmin::text AS tx FROM activity_feed WHERE user_id = ${userId}`.pipe(
      Effect.map((rows) => rows.map((r) => r.tx))
    ))

/** One notification's inbox copy and feed entry, enlisted in the current unit. */
const file = (userId: string) =>
  Effect.gen(function*() {
    const inbox = yield* InboxWrites
    const feed = yield* ActivityFeed
    const itemId = yield* makeId("anot")
    yield* inbox.add([{ userId, origin: "notification", itemId, sourceName: "ci", title: "t", body: "b" }])
    yield* feed.add([{ userId, kind: "notification", refId: itemId, sourceName: "ci", title: "t" }])
  })

layer(TestServerLayer, { timeout: "60 seconds", excludeTestServices: true })("unit of work", (it) => {
  it.effect("enlisted rows are written at the commit, in one transaction", () =>
    Effect.gen(function*() {
      const unit = yield* UnitOfWork
      const { person } = yield* makePerson()
      const before = yield* unit.commit(Effect.gen(function*() {
        yield* file(person.id)
        yield* file(person.id)
        return yield* writers(person.id)
      }))
      assert.deepStrictEqual(before, [])
      const after = yield* writers(person.id)
      assert.strictEqual(after.length, 4)
      assert.strictEqual(new Set(after).size, 1)
    }))

  it.effect("concurrent units commit together: one statement for all their rows", () =>
    Effect.gen(function*() {
      const unit = yield* UnitOfWork
      const people = yield* Effect.forEach([1, 2, 3, 4, 5], () => makePerson())
      yield* Effect.forEach(people, ({ person }) => unit.commit(file(person.id)), { concurrency: "unbounded" })
      const txs = yield* Effect.forEach(people, ({ person }) => writers(person.id))
      assert.deepStrictEqual(txs.map((t) => t.length), [2, 2, 2, 2, 2])
      assert.strictEqual(new Set(txs.flat()).size, 1)
    }))

  it.effect("units of one commit may record the same feed entry: one entry, no failure", () =>
    Effect.gen(function*() {
      const unit = yield* UnitOfWork
      const feed = yield* ActivityFeed
      const { person } = yield* makePerson()
      const entry = (title: string) => ({ userId: person.id, kind: "live_activity" as const, refId: "act_same", sourceName: "ci", title })
      yield* Effect.forEach(["a", "b", "c"], (title) => unit.commit(feed.add([entry(title)])), { concurrency: "unbounded" })
      const page = yield* feed.page(person.id, 1)
      assert.strictEqual(page.total, 1)
      assert.include(["a", "b", "c"], page.items[0]?.title)
    }))

  it.effect("a failing body writes nothing; outside a unit a write is immediate", () =>
    Effect.gen(function*() {
      const unit = yield* UnitOfWork
      const { person } = yield* makePerson()
      const failed = yield* unit.commit(Effect.andThen(file(person.id), Effect.fail("refused" as const))).pipe(Effect.flip)
      assert.strictEqual(failed, "refused")
      assert.deepStrictEqual(yield* writers(person.id), [])
      yield* file(person.id)
      assert.strictEqual((yield* writers(person.id)).length, 2)
    }))

  it.effect("a unit inside a transaction commits or rolls back with it; a nested unit joins the outer one", () =>
    Effect.gen(function*() {
      const unit = yield* UnitOfWork
      const sql = yield* SqlClient.SqlClient
      const { person } = yield* makePerson()
      const rolledBack = yield* sql.withTransaction(Effect.andThen(
        unit.commit(unit.commit(file(person.id))),
        Effect.fail("after the unit" as const)
      )).pipe(Effect.flip)
      assert.strictEqual(rolledBack, "after the unit")
      assert.deepStrictEqual(yield* writers(person.id), [])
      const inner = yield* unit.commit(Effect.andThen(unit.commit(file(person.id)), writers(person.id)))
      assert.deepStrictEqual(inner, [])
      yield* sql.withTransaction(unit.commit(file(person.id)))
      assert.strictEqual((yield* writers(person.id)).length, 4)
    }))

  it.effect("a unit naming a row that no longer exists fails alone with MissingReference; its batch neighbours commit", () =>
    Effect.gen(function*() {
      const unit = yield* UnitOfWork
      const people = yield* Effect.forEach([1, 2, 3], () => makePerson())
      // A person deleted after the request was checked: its rows break their foreign key.
      const exits = yield* Effect.forEach(
        [...people.map(({ person }) => person.id), "usr_deleted_meanwhile"],
        (userId) => Effect.exit(unit.commit(file(userId))),
        { concurrency: "unbounded" }
      )
      assert.deepStrictEqual(exits.slice(0, 3).map((e) => e._tag), ["Success", "Success", "Success"])
      const failed = exits[3]!
      assert.isTrue(failed._tag === "Failure" && Cause.findErrorOption(failed.cause).pipe(Option.map((e) => e._tag), Option.getOrUndefined) === "MissingReference")
      const txs = yield* Effect.forEach(people, ({ person }) => writers(person.id))
      assert.deepStrictEqual(txs.map((t) => t.length), [2, 2, 2])
    }))
})
