/**
 * The activity feed and the inbox writes through the service layer on a real
 * database: paging, totals, newest first, idempotent records, and both
 * joining a caller's transaction.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { makePerson, TestServerLayer } from "../../../../test/support/server.ts"
import { ActivityFeed, FEED_PAGE_SIZE } from "../../src/inbox/ActivityFeed.ts"
import type { FeedEntry } from "../../src/inbox/ActivityFeed.ts"
import { InboxWrites } from "../../src/inbox/InboxWrites.ts"
import { makeId } from "../../src/lib/Ids.ts"

const at = (i: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString()

const entry = (userId: string, i: number, extra: Partial<FeedEntry> = {}): FeedEntry => ({
  userId,
  kind: (["notification", "live_activity", "response"] as const)[i % 3]!,
  refId: `ref_${i}`,
  sourceName: "ci",
  title: `entry ${i}`,
  createdAt: at(i),
  ...extra
})

layer(TestServerLayer, { timeout: "120 seconds", excludeTestServices: true })("activity feed", (it) => {
  it.effect("pages of 20, newest first, with the total; a page past the end is empty", () =>
    Effect.gen(function*() {
      const feed = yield* ActivityFeed
      const { person } = yield* makePerson()
      const { person: other } = yield* makePerson()
      // Recorded out of order: the feed orders by time, not by insertion.
      const order = Array.from({ length: 45 }, (_, i) => (i * 17) % 45)
      for (const i of order) yield* feed.record(entry(person.id, i))
      yield* feed.record(entry(other.id, 99))
      const titles = (page: { items: ReadonlyArray<{ title: string }> }) => page.items.map((i) => i.title)
      const newestFirst = Array.from({ length: 45 }, (_, i) => `entry ${44 - i}`)
      const p1 = yield* feed.page(person.id, 1)
      assert.deepStrictEqual({ page: p1.page, pageSize: p1.pageSize, total: p1.total }, { page: 1, pageSize: FEED_PAGE_SIZE, total: 45 })
      assert.deepStrictEqual(titles(p1), newestFirst.slice(0, 20))
      assert.deepStrictEqual(titles(yield* feed.page(person.id, 2)), newestFirst.slice(20, 40))
      const p3 = yield* feed.page(person.id, 3)
      assert.deepStrictEqual(titles(p3), newestFirst.slice(40))
      const p4 = yield* feed.page(person.id, 4)
      assert.deepStrictEqual({ items: p4.items, page: p4.page, total: p4.total }, { items: [], page: 4, total: 45 })
      const first = p1.items[0]!
      assert.match(first.id, /^afi_/)
      assert.deepStrictEqual({ ...first, id: "" }, {
        id: "",
        kind: "response",
        sourceName: "ci",
        sourceImageUrl: null,
        title: "entry 44",
        detail: null,
        url: null,
        result: null,
        createdAt: at(44)
      })
      const theirs = yield* feed.page(other.id, 1)
      assert.deepStrictEqual({ total: theirs.total, titles: titles(theirs) }, { total: 1, titles: ["entry 99"] })
      const empty = yield* feed.page((yield* makePerson()).person.id, 1)
      assert.deepStrictEqual({ items: empty.items, total: empty.total }, { items: [], total: 0 })
    }))

  it.effect("recording the same (user, kind, ref) again keeps one entry, its id and its time, and takes the new outcome", () =>
    Effect.gen(function*() {
      const feed = yield* ActivityFeed
      const { person } = yield* makePerson()
      const first = yield* feed.record(entry(person.id, 0, { kind: "live_activity", refId: "act_1", detail: "started" }))
      assert.isTrue(first.inserted)
      const replay = yield* feed.record(entry(person.id, 0, { kind: "live_activity", refId: "act_1", detail: "started" }))
      assert.deepStrictEqual(replay, { id: first.id, inserted: false })
      const ended = yield* feed.record(entry(person.id, 0, {
        kind: "live_activity",
        refId: "act_1",
        detail: "deploy finished",
        result: "ended",
        url: "https://x.example/a",
        sourceImageUrl: "https://x.example/i.png",
        createdAt: at(30)
      }))
      assert.deepStrictEqual(ended, { id: first.id, inserted: false })
      // The same ref under another kind, or for another person, is another entry.
      const response = yield* feed.record(entry(person.id, 1, { kind: "response", refId: "act_1", result: "approved" }))
      assert.isTrue(response.inserted)
      assert.notStrictEqual(response.id, first.id)
      const page = yield* feed.page(person.id, 1)
      assert.strictEqual(page.total, 2)
      const activity = page.items.find((i) => i.id === first.id)!
      assert.deepStrictEqual([activity.detail, activity.result, activity.url, activity.sourceImageUrl, activity.createdAt], [
        "deploy finished",
        "ended",
        "https://x.example/a",
        "https://x.example/i.png",
        at(0)
      ])
      assert.deepStrictEqual(page.items.map((i) => i.id), [response.id, first.id])
    }))

  it.effect("record and InboxWrites.insert join the caller's transaction: a rollback leaves nothing", () =>
    Effect.gen(function*() {
      const feed = yield* ActivityFeed
      const writes = yield* InboxWrites
      const sql = yield* SqlClient.SqlClient
      const { person } = yield* makePerson()
      const itemId = yield* makeId("anot")
      const failed = yield* sql.withTransaction(Effect.gen(function*() {
        yield* feed.record(entry(person.id, 1, { refId: itemId }))
        yield* writes.insert([{ userId: person.id, origin: "notification", itemId, sourceName: "ci", title: "t", body: "b" }])
        return yield* Effect.fail("caller failed after writing" as const)
      })).pipe(Effect.flip)
      assert.strictEqual(failed, "caller failed after writing")
      assert.strictEqual((yield* feed.page(person.id, 1)).total, 0)
      const rows = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM inbox_items WHERE user_id = ${person.id}`
      assert.strictEqual(rows[0]!.n, 0)
      // Committed, both are there.
      yield* sql.withTransaction(Effect.gen(function*() {
        yield* feed.record(entry(person.id, 1, { refId: itemId }))
        yield* writes.insert([{ userId: person.id, origin: "notification", itemId, sourceName: "ci", title: "t", body: "b" }])
      }))
      assert.strictEqual((yield* feed.page(person.id, 1)).total, 1)
      const after = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM inbox_items WHERE user_id = ${person.id}`
      assert.strictEqual(after[0]!.n, 1)
    }))

  it.effect("InboxWrites.insert writes many rows in one go, fills defaults, and skips rows already there", () =>
    Effect.gen(function*() {
      const writes = yield* InboxWrites
      const sql = yield* SqlClient.SqlClient
      const { person } = yield* makePerson()
      const { person: family } = yield* makePerson()
      const itemId = yield* makeId("evt")
      const copy = (userId: string) => ({
        userId,
        origin: "event" as const,
        itemId,
        sourceName: "Builds",
        title: "Green",
        body: "## All *good*",
        bodyFormat: "markdown" as const
      })
      assert.strictEqual(yield* writes.insert([copy(person.id), copy(family.id)]), 2)
      assert.strictEqual(yield* writes.insert([copy(person.id), { ...copy(person.id), itemId: `${itemId}x` }]), 1)
      assert.strictEqual(yield* writes.insert([]), 0)
      const rows = yield* sql<{ userId: string; preview: string; projectId: string | null; readAt: string | null; bodyFormat: string }>`
        SELECT user_id, preview, project_id, read_at, body_format FROM inbox_items WHERE item_id = ${itemId} ORDER BY user_id`
      assert.deepStrictEqual(rows.map((r) => ({ ...r })), [person.id, family.id].sort().map((userId) => ({
        userId,
        preview: "All good",
        projectId: null,
        readAt: null,
        bodyFormat: "markdown"
      })))
      const given = yield* makeId("anot")
      yield* writes.insert([{ ...copy(person.id), origin: "notification", itemId: given, preview: "custom", createdAt: at(5) }])
      const custom = yield* sql<{ preview: string; createdAt: string }>`SELECT preview, created_at FROM inbox_items WHERE item_id = ${given}`
      assert.deepStrictEqual({ ...custom[0]! }, { preview: "custom", createdAt: at(5) })
    }))
})
