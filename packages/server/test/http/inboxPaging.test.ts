/**
 * Paging the inbox: keyset pages under concurrent inserts skip and repeat
 * nothing, the project and unread filters, and signed cursors that refuse
 * alteration, another account and another filter.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Fiber, Ref } from "effect"
import { SqlClient } from "effect/sql"
import { TestServerLayer, makeAgent } from "../../../../test/support/server.ts"
import { get, many, seed, tamper } from "./inboxSupport.ts"

layer(TestServerLayer, { timeout: "180 seconds", excludeTestServices: true })("inbox paging", (it) => {
  it.effect("paging with small limits while items arrive concurrently skips and repeats nothing", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["inbox:read"])
      const sql = yield* SqlClient.SqlClient
      const before = yield* seed(agent.person.id, many(23))
      const done = yield* Ref.make(false)
      const added = yield* Ref.make(0)
      // Keeps inserting until paging is over.
      const inserter = yield* Effect.gen(function*() {
        while (!(yield* Ref.get(done))) {
          yield* seed(agent.person.id, [{ title: "late" }])
          yield* Ref.update(added, (n) => n + 1)
          yield* Effect.yieldNow
        }
      }).pipe(Effect.forkChild)
      const seen: Array<string> = []
      let cursor: string | undefined
      let pages = 0
      do {
        const page = yield* agent.client.inbox.list({ query: { limit: 4, ...(cursor === undefined ? {} : { cursor }) } })
        seen.push(...page.items.map((i) => i.id))
        cursor = page.nextCursor ?? undefined
        pages++
        // Between pages, also insert directly so arrivals are certain.
        yield* seed(agent.person.id, [{ title: "between" }])
      } while (cursor !== undefined && pages < 100)
      yield* Ref.set(done, true)
      yield* Fiber.join(inserter)
      assert.isAbove(yield* Ref.get(added), 0)
      assert.strictEqual(new Set(seen).size, seen.length, "no item repeated")
      // Exactly the items at or below the first page's top, newest first: none skipped.
      const expected = yield* sql<{ id: string }>`
        SELECT origin || ':' || item_id AS id FROM inbox_items
        WHERE user_id = ${agent.person.id}
          AND seq <= (SELECT seq FROM inbox_items WHERE user_id = ${agent.person.id} AND origin || ':' || item_id = ${seen[0]!})
        ORDER BY seq DESC`
      assert.deepStrictEqual(seen, expected.map((r) => r.id))
      for (const id of before) assert.include(seen, id)
    }))

  it.effect("project filter: a project id, the word unfiled, an unknown project; cursors keep the filter", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["inbox:read"])
      const alpha = yield* seed(agent.person.id, many(3, { projectId: "alpha" }))
      const unfiled = yield* seed(agent.person.id, many(3))
      const beta = yield* seed(agent.person.id, many(2, { projectId: "beta" }))
      const listed = (query: { project?: string; cursor?: string; limit?: number }) =>
        agent.client.inbox.list({ query }).pipe(Effect.map((p) => ({ ids: p.items.map((i) => i.id), next: p.nextCursor })))
      assert.deepStrictEqual((yield* listed({ project: "alpha" })).ids, [...alpha].reverse())
      assert.deepStrictEqual((yield* listed({ project: "beta" })).ids, [...beta].reverse())
      assert.deepStrictEqual((yield* listed({ project: "unfiled" })).ids, [...unfiled].reverse())
      assert.deepStrictEqual((yield* listed({ project: "nope" })).ids, [])
      const first = yield* listed({ project: "unfiled", limit: 2 })
      assert.deepStrictEqual(first.ids, unfiled.slice(1).reverse())
      const second = yield* listed({ project: "unfiled", limit: 2, cursor: first.next! })
      assert.deepStrictEqual(second.ids, [unfiled[0]!])
      assert.isNull(second.next)
    }))

  it.effect("unread filter (1 or true) lists only unread items, newest first, and pages", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["inbox:read", "inbox:write"])
      const ids = yield* seed(agent.person.id, many(6))
      for (const id of [ids[1]!, ids[4]!]) yield* agent.client.inbox.read({ params: { id } })
      const unread = [ids[5]!, ids[3]!, ids[2]!, ids[0]!]
      for (const flag of ["1", "true"] as const) {
        assert.deepStrictEqual((yield* agent.client.inbox.list({ query: { unread: flag } })).items.map((i) => i.id), unread)
      }
      const first = yield* agent.client.inbox.list({ query: { unread: "1", limit: 3 } })
      assert.deepStrictEqual(first.items.map((i) => i.id), unread.slice(0, 3))
      // The same filter spelled `true` is the same filter.
      const second = yield* agent.client.inbox.list({ query: { unread: "true", limit: 3, cursor: first.nextCursor! } })
      assert.deepStrictEqual(second.items.map((i) => i.id), unread.slice(3))
      assert.isNull(second.nextCursor)
      const all = yield* agent.client.inbox.list()
      assert.isString(all.items.find((i) => i.id === ids[1])!.readAt)
      assert.isNull(all.items.find((i) => i.id === ids[0])!.readAt)
    }))

  it.effect("an altered, garbled, foreign or other-filter cursor is 400 BAD_REQUEST; another limit is fine", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["inbox:read"])
      const other = yield* makeAgent(["inbox:read"])
      yield* seed(agent.person.id, many(5, { projectId: "p" }))
      yield* seed(other.person.id, many(5, { projectId: "p" }))
      const page = yield* agent.client.inbox.list({ query: { limit: 2 } })
      const cursor = page.nextCursor!
      const dot = cursor.indexOf(".")
      const theirs = (yield* other.client.inbox.list({ query: { limit: 2 } })).nextCursor!
      const filtered = (yield* agent.client.inbox.list({ query: { limit: 2, project: "p" } })).nextCursor!
      const bad = [
        tamper(cursor, 3), // content
        tamper(cursor, dot + 3), // signature
        cursor.slice(0, dot), // no signature
        `${cursor}x`,
        "garbage",
        "e30.AAAA",
        page.readThroughToken, // a read-through token is not a cursor
        theirs // another account's cursor
      ]
      for (const c of bad) {
        const res = yield* get(agent.secret, `/inbox/notifications?limit=2&cursor=${encodeURIComponent(c)}`)
        assert.strictEqual(res.status, 400, c)
        assert.strictEqual((res.body as { code: string }).code, "BAD_REQUEST", c)
      }
      // A cursor made for one filter is refused under another, in both directions.
      const mismatches = [
        { cursor, project: "p" },
        { cursor, unread: "1" as const },
        { cursor: filtered },
        { cursor: filtered, project: "q" },
        { cursor: filtered, project: "unfiled" }
      ]
      for (const query of mismatches) {
        const error = yield* Effect.flip(agent.client.inbox.list({ query }))
        assert.strictEqual(error._tag, "BadRequest", JSON.stringify(query))
      }
      // The cursor itself is still good, with any limit.
      const next = yield* agent.client.inbox.list({ query: { limit: 10, cursor } })
      assert.strictEqual(next.items.length, 3)
      assert.isNull(next.nextCursor)
    }))
})
