/**
 * One person's inbox items commit in `seq` order: while an insert is open, a
 * later one for the same person waits for it, so no reader can see an item
 * whose predecessor appears later (that would make a cursor skip it and a
 * read-through token cover it unseen).
 */
import { assert, layer } from "@effect/vitest"
import { Deferred, Duration, Effect, Fiber } from "effect"
import { SqlClient } from "effect/sql"
import { makePerson, TestServerLayer } from "../../../../test/support/server.ts"
import { InboxWrites } from "../../src/inbox/InboxWrites.ts"

layer(TestServerLayer, { timeout: "60 seconds", excludeTestServices: true })("inbox commit order", (it) => {
  it.effect("a later insert for the same person waits for the open one", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const inbox = yield* InboxWrites
      const { person } = yield* makePerson()
      const item = (itemId: string) => ({ userId: person.id, origin: "notification" as const, itemId, sourceName: "t", title: itemId, body: itemId })
      const visible = sql<{ itemId: string }>`SELECT item_id FROM inbox_items WHERE user_id = ${person.id} ORDER BY seq`.pipe(
        Effect.map((rows) => rows.map((r) => r.itemId))
      )

      const inserted = yield* Deferred.make<void>()
      const release = yield* Deferred.make<void>()
      const first = yield* Effect.forkChild(Effect.gen(function*() {
        yield* inbox.insert([item("anot_first")])
        yield* Deferred.succeed(inserted, undefined)
        yield* Deferred.await(release)
      }).pipe(sql.withTransaction))
      yield* Deferred.await(inserted)
      const second = yield* Effect.forkChild(inbox.insert([item("anot_second")]))
      yield* Effect.sleep(Duration.millis(300))
      // The second has not committed: it waits behind the open first one. (Watched
      // without a query: the embedded database's one connection is the open one's.)
      assert.isUndefined(second.pollUnsafe())
      yield* Deferred.succeed(release, undefined)
      yield* Fiber.join(first)
      yield* Fiber.join(second)
      assert.deepStrictEqual(yield* visible, ["anot_first", "anot_second"])
    }))
})
