/**
 * The inbox over HTTP with the typed client: scopes, another account's items,
 * keyset paging under concurrent inserts, filters, signed cursors and
 * read-through tokens, read marks, push receipts and the project view. Items
 * are seeded through InboxWrites, as notifications and events will write them.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Fiber, Ref } from "effect"
import { SqlClient } from "effect/sql"
import { makeAgent, rawFetch, TestServerLayer } from "../../../../test/support/server.ts"
import { InboxWrites } from "../../src/inbox/InboxWrites.ts"
import type { NewInboxItem } from "../../src/inbox/InboxWrites.ts"
import { makeId } from "../../src/lib/Ids.ts"

type Seed = Partial<Omit<NewInboxItem, "userId">>

/** Inserts one item at a time (so `seq` follows the order given); answers their inbox ids. */
const seed = (userId: string, items: ReadonlyArray<Seed>) =>
  Effect.gen(function*() {
    const writes = yield* InboxWrites
    const ids: Array<string> = []
    for (const [i, item] of items.entries()) {
      const origin = item.origin ?? "notification"
      const itemId = item.itemId ?? (yield* makeId(origin === "event" ? "evt" : "anot"))
      yield* writes.insert([{ userId, origin, itemId, sourceName: "ci", title: `item ${i}`, body: `body ${i}`, ...item }])
      ids.push(`${origin}:${itemId}`)
    }
    return ids
  })

/** A decoded record as plain fields, to compare with an object literal. */
const plain = <A extends object>(a: A) => ({ ...a })

const many = (n: number, item: Seed = {}) => Array.from({ length: n }, () => item)

const get = (secret: string, path: string) => rawFetch(`/api/agent${path}`, { headers: { authorization: `Bearer ${secret}` } })
const post = (secret: string, path: string, body?: unknown) =>
  rawFetch(`/api/agent${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${secret}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })

/** Flips one character of a token's signature or content. */
const tamper = (token: string, at: number) => {
  const c = token[at] === "A" ? "B" : "A"
  return token.slice(0, at) + c + token.slice(at + 1)
}

const READ_ROUTES = ["/inbox/projects", "/inbox/notifications", "/inbox/notifications/notification:anot_x1"] as const
const WRITE_ROUTES = [
  ["/inbox/notifications/notification:anot_x1/read", undefined],
  ["/inbox/notifications/notification:anot_x1/unread", undefined],
  ["/inbox/notifications/read-all", { readThroughToken: "x" }]
] as const

layer(TestServerLayer, { timeout: "180 seconds", excludeTestServices: true })("inbox", (it) => {
  it.effect("every route needs its scope: 401 without a token, 403 MISSING_SCOPE naming inbox:read or inbox:write", () =>
    Effect.gen(function*() {
      const none = yield* makeAgent([])
      const reader = yield* makeAgent(["inbox:read"])
      const writer = yield* makeAgent(["inbox:write"])
      for (const path of READ_ROUTES) {
        assert.strictEqual((yield* rawFetch(`/api/agent${path}`)).status, 401, path)
        for (const agent of [none, writer]) {
          const res = yield* get(agent.secret, path)
          assert.strictEqual(res.status, 403, path)
          assert.deepStrictEqual(res.body, {
            error: "The token lacks scopes: inbox:read.",
            code: "MISSING_SCOPE",
            required: ["inbox:read"]
          })
        }
      }
      for (const [path, body] of WRITE_ROUTES) {
        assert.strictEqual((yield* rawFetch(`/api/agent${path}`, { method: "POST" })).status, 401, path)
        for (const agent of [none, reader]) {
          const res = yield* post(agent.secret, path, body)
          assert.strictEqual(res.status, 403, path)
          assert.deepStrictEqual((res.body as { required: Array<string> }).required, ["inbox:write"])
        }
      }
      // With the scope the same routes answer (404: the item does not exist; 400: the token is not one).
      assert.strictEqual((yield* get(reader.secret, "/inbox/projects")).status, 200)
      assert.strictEqual((yield* get(reader.secret, "/inbox/notifications/notification:anot_x1")).status, 404)
      assert.strictEqual((yield* post(writer.secret, "/inbox/notifications/notification:anot_x1/read")).status, 404)
      assert.strictEqual((yield* post(writer.secret, "/inbox/notifications/read-all", { readThroughToken: "x" })).status, 400)
    }))

  it.effect("another account's item is 404 like a missing one on every item route, and never listed", () =>
    Effect.gen(function*() {
      const a = yield* makeAgent(["inbox:read", "inbox:write"])
      const b = yield* makeAgent(["inbox:read", "inbox:write"])
      const [theirs] = yield* seed(b.person.id, [{ projectId: "secret-project" }])
      const missing = "notification:anot_0000000000000000000000000a"
      for (const suffix of ["", "/read", "/unread"]) {
        const foreign = suffix === "" ? yield* get(a.secret, `/inbox/notifications/${theirs}`)
          : yield* post(a.secret, `/inbox/notifications/${theirs}${suffix}`)
        const none = suffix === "" ? yield* get(a.secret, `/inbox/notifications/${missing}`)
          : yield* post(a.secret, `/inbox/notifications/${missing}${suffix}`)
        assert.strictEqual(foreign.status, 404)
        assert.deepStrictEqual(foreign.body, none.body)
        assert.deepStrictEqual(foreign.body, { error: "Inbox item not found.", code: "NOT_FOUND" })
      }
      assert.strictEqual((yield* Effect.flip(a.client.inbox.get({ params: { id: theirs! } })))._tag, "NotFound")
      assert.deepStrictEqual((yield* a.client.inbox.list({ query: {} })).items, [])
      assert.deepStrictEqual(plain(yield* a.client.inbox.projects()), { projects: [], totalUnread: 0 })
      // b's item is untouched by a's attempts.
      const detail = yield* b.client.inbox.get({ params: { id: theirs! } })
      assert.isNull(detail.readAt)
    }))

  it.effect("a malformed item id or query is 400 VALIDATION_FAILED; limit is 1–50", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["inbox:read"])
      for (const query of ["limit=0", "limit=51", "limit=abc", "limit=2.5", "unread=yes", "project="]) {
        const res = yield* get(agent.secret, `/inbox/notifications?${query}`)
        assert.strictEqual(res.status, 400, query)
        assert.strictEqual((res.body as { code: string }).code, "VALIDATION_FAILED", query)
      }
      for (const id of ["anot_1", "notification:evt_1", "event:anot_1", "notification:anot_a-b"]) {
        assert.strictEqual((yield* get(agent.secret, `/inbox/notifications/${id}`)).status, 400, id)
      }
      assert.strictEqual((yield* get(agent.secret, "/inbox/notifications?limit=1")).status, 200)
      assert.strictEqual((yield* get(agent.secret, "/inbox/notifications?limit=50")).status, 200)
    }))

  it.effect("the list is newest first with every summary field; limit defaults to 20", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["inbox:read"])
      const ids = yield* seed(agent.person.id, many(24))
      const [event] = yield* seed(agent.person.id, [{
        origin: "event",
        projectId: "deploys",
        sourceName: "Builds",
        sourceImageUrl: "https://img.example/b.png",
        title: "Build **green**",
        body: "# Done\n\nAll [tests](https://ci.example/1) passed.",
        bodyFormat: "markdown",
        url: "https://ci.example/1"
      }])
      const page = yield* agent.client.inbox.list({ query: {} })
      assert.strictEqual(page.items.length, 20)
      assert.deepStrictEqual(page.items.map((i) => i.id), [event!, ...ids.slice(-19).reverse()])
      assert.isString(page.nextCursor)
      const first = page.items[0]!
      assert.deepStrictEqual({ ...first, createdAt: "t" }, {
        id: event!,
        origin: "event",
        projectId: "deploys",
        projectName: "deploys",
        sourceName: "Builds",
        sourceImageUrl: "https://img.example/b.png",
        title: "Build **green**",
        preview: "Done All tests passed.",
        url: "https://ci.example/1",
        bodyFormat: "markdown",
        readAt: null,
        createdAt: "t",
        app: null
      })
      assert.isTrue(Date.parse(first.createdAt) > 0)
      assert.deepStrictEqual(page.items[1]!.projectId, null)
      assert.deepStrictEqual(page.items[1]!.projectName, null)
      const rest = yield* agent.client.inbox.list({ query: { cursor: page.nextCursor! } })
      assert.deepStrictEqual(rest.items.map((i) => i.id), ids.slice(0, 5).reverse())
      assert.isNull(rest.nextCursor)
    }))

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
      const all = yield* agent.client.inbox.list({ query: {} })
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

  it.effect("read and unread are idempotent; read keeps the first readAt", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["inbox:read", "inbox:write"])
      const [id] = yield* seed(agent.person.id, [{ origin: "event" }])
      const first = yield* agent.client.inbox.read({ params: { id: id! } })
      assert.strictEqual(first.ok, true)
      assert.strictEqual(first.idempotent, false)
      assert.isString(first.readAt)
      const again = yield* agent.client.inbox.read({ params: { id: id! } })
      assert.deepStrictEqual(plain(again), { ok: true, readAt: first.readAt, idempotent: true })
      assert.strictEqual((yield* agent.client.inbox.get({ params: { id: id! } })).readAt, first.readAt)
      const unread = yield* agent.client.inbox.unread({ params: { id: id! } })
      assert.deepStrictEqual(plain(unread), { ok: true, readAt: null, idempotent: false })
      assert.deepStrictEqual(plain(yield* agent.client.inbox.unread({ params: { id: id! } })), { ok: true, readAt: null, idempotent: true })
      assert.isNull((yield* agent.client.inbox.get({ params: { id: id! } })).readAt)
      const reread = yield* agent.client.inbox.read({ params: { id: id! } })
      assert.strictEqual(reread.idempotent, false)
      assert.isString(reread.readAt)
    }))

  it.effect("read-all marks what the list's token covers; items that arrive after the list stay unread", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["inbox:read", "inbox:write"])
      const other = yield* makeAgent(["inbox:read", "inbox:write"])
      const old = yield* seed(agent.person.id, many(5, { projectId: "x" }))
      yield* agent.client.inbox.read({ params: { id: old[0]! } })
      const theirs = yield* seed(other.person.id, many(2))
      // The token covers the whole inbox at list time, not only this (filtered, one-item) page.
      const page = yield* agent.client.inbox.list({ query: { limit: 1, project: "unfiled" } })
      assert.deepStrictEqual(page.items, [])
      const late = yield* seed(agent.person.id, many(3))
      const result = yield* agent.client.inbox.readAll({ payload: { readThroughToken: page.readThroughToken } })
      assert.deepStrictEqual(plain(result), { ok: true, marked: 4 })
      const unread = yield* agent.client.inbox.list({ query: { unread: "1" } })
      assert.deepStrictEqual(unread.items.map((i) => i.id), [...late].reverse())
      assert.deepStrictEqual(plain(yield* agent.client.inbox.readAll({ payload: { readThroughToken: page.readThroughToken } })), {
        ok: true,
        marked: 0
      })
      // The other account's items are untouched.
      assert.strictEqual((yield* other.client.inbox.list({ query: { unread: "1" } })).items.length, theirs.length)
      // An empty inbox still gives a token, and it marks nothing.
      const empty = yield* makeAgent(["inbox:read", "inbox:write"])
      const none = yield* empty.client.inbox.list({ query: {} })
      assert.deepStrictEqual(plain(yield* empty.client.inbox.readAll({ payload: { readThroughToken: none.readThroughToken } })), {
        ok: true,
        marked: 0
      })
    }))

  it.effect("read-all refuses an altered token, a cursor, and another account's token with 400 BAD_REQUEST", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["inbox:read", "inbox:write"])
      const other = yield* makeAgent(["inbox:read", "inbox:write"])
      yield* seed(agent.person.id, many(3))
      yield* seed(other.person.id, many(3))
      const page = yield* agent.client.inbox.list({ query: { limit: 1 } })
      const token = page.readThroughToken
      const theirs = (yield* other.client.inbox.list({ query: {} })).readThroughToken
      for (const bad of [tamper(token, 2), tamper(token, token.indexOf(".") + 2), "nonsense", page.nextCursor!, theirs]) {
        const res = yield* post(agent.secret, "/inbox/notifications/read-all", { readThroughToken: bad })
        assert.strictEqual(res.status, 400, bad)
        assert.strictEqual((res.body as { code: string }).code, "BAD_REQUEST", bad)
      }
      assert.strictEqual((yield* agent.client.inbox.list({ query: { unread: "1" } })).items.length, 3)
      assert.strictEqual((yield* other.client.inbox.list({ query: { unread: "1" } })).items.length, 3)
      const missing = yield* post(agent.secret, "/inbox/notifications/read-all", {})
      assert.strictEqual((missing.body as { code: string }).code, "VALIDATION_FAILED")
    }))

  it.effect("detail: body, summary, withdrawn status, and this account's alert receipts with sending shown as pending", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["inbox:read"])
      const other = yield* makeAgent(["inbox:read"])
      const sql = yield* SqlClient.SqlClient
      const phone = yield* agent.app.devices.register({ payload: { platform: "ios", pushToken: `p-${agent.person.id}` } })
      const tablet = yield* agent.app.devices.register({ payload: { platform: "android", pushToken: `t-${agent.person.id}` } })
      const theirs = yield* other.app.devices.register({ payload: { platform: "ios", pushToken: `o-${other.person.id}` } })
      const notificationId = yield* makeId("anot")
      yield* sql`INSERT INTO notifications (id, user_id, source_name, title, body, withdrawn_at)
                 VALUES (${notificationId}, ${agent.person.id}, 'ci', 'Deploy', 'Shipped', now())`
      const [id] = yield* seed(agent.person.id, [{
        itemId: notificationId,
        title: "Deploy",
        body: "Shipped *v2*",
        bodyFormat: "markdown",
        summary: "v2 is live"
      }])
      // A receipt belongs to its device's owner (a family member's, for a shared service's event).
      const receipt = (deviceId: string, status: string, extra: { purpose?: string; errorCode?: string; checked?: boolean; userId?: string } = {}) =>
        Effect.gen(function*() {
          const rid = yield* makeId("rcp")
          yield* sql`INSERT INTO push_receipts (id, user_id, device_id, origin, item_id, purpose, message, status, error_code, checked_at)
                     VALUES (${rid}, ${extra.userId ?? agent.person.id}, ${deviceId}, 'notification', ${notificationId},
                             ${extra.purpose ?? "alert"}, '{}'::jsonb, ${status}, ${extra.errorCode ?? null},
                             ${extra.checked === true ? sql`now()` : sql`NULL`})`
          return rid
        })
      const accepted = yield* receipt(phone.id, "accepted", { checked: true })
      const sending = yield* receipt(tablet.id, "sending")
      yield* receipt(phone.id, "accepted", { purpose: "withdraw" })
      yield* receipt(theirs.id, "accepted", { userId: other.person.id })
      const detail = yield* agent.client.inbox.get({ params: { id: id! } })
      assert.strictEqual(detail.id, id)
      assert.strictEqual(detail.body, "Shipped *v2*")
      assert.strictEqual(detail.preview, "Shipped v2")
      assert.strictEqual(detail.summary, "v2 is live")
      assert.strictEqual(detail.status, "withdrawn")
      assert.strictEqual(detail.app, null)
      const receipts = detail.pushReceipts!
      assert.deepStrictEqual(receipts.map((r) => [r.id, r.deviceId, r.status, r.errorCode]).sort(), [
        [accepted, phone.id, "accepted", null],
        [sending, tablet.id, "pending", null]
      ].sort())
      assert.isString(receipts.find((r) => r.id === accepted)!.checkedAt)
      assert.isNull(receipts.find((r) => r.id === sending)!.checkedAt)

      // An error receipt keeps its code; an event has no status; a notification not withdrawn has none either.
      const liveId = yield* makeId("anot")
      yield* sql`INSERT INTO notifications (id, user_id, source_name, title, body)
                 VALUES (${liveId}, ${agent.person.id}, 'ci', 'Live', 'b')`
      const [live] = yield* seed(agent.person.id, [{ itemId: liveId }])
      const failed = yield* makeId("rcp")
      yield* sql`INSERT INTO push_receipts (id, user_id, device_id, origin, item_id, purpose, message, status, error_code, checked_at)
                 VALUES (${failed}, ${agent.person.id}, ${phone.id}, 'notification', ${liveId}, 'alert', '{}'::jsonb,
                         'error', 'BadDeviceToken', now())`
      const liveDetail = yield* agent.client.inbox.get({ params: { id: live! } })
      assert.isNull(liveDetail.status)
      assert.deepStrictEqual(liveDetail.pushReceipts!.map((r) => [r.status, r.errorCode]), [["error", "BadDeviceToken"]])
      const [event] = yield* seed(agent.person.id, [{ origin: "event" }])
      const eventDetail = yield* agent.client.inbox.get({ params: { id: event! } })
      assert.isNull(eventDetail.status)
      assert.isNull(eventDetail.summary)
      assert.deepStrictEqual(eventDetail.pushReceipts, [])
    }))

  it.effect("projects: one per project and one for the unfiled, counts, latest item, most recent first", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["inbox:read", "inbox:write"])
      const alpha = yield* seed(agent.person.id, many(3, { projectId: "alpha" }))
      yield* seed(agent.person.id, many(2))
      yield* seed(agent.person.id, [{ projectId: "beta", title: "beta one", body: "first" }])
      yield* seed(agent.person.id, [{
        projectId: "alpha",
        title: "alpha latest",
        body: "**bold** news",
        bodyFormat: "markdown",
        sourceImageUrl: "https://img.example/a.png"
      }])
      yield* agent.client.inbox.read({ params: { id: alpha[0]! } })
      yield* agent.client.inbox.read({ params: { id: alpha[1]! } })
      const result = yield* agent.client.inbox.projects()
      assert.strictEqual(result.totalUnread, 2 + 2 + 1)
      assert.deepStrictEqual(result.projects.map((p) => ({ ...p, latestAt: typeof p.latestAt })), [
        {
          projectId: "alpha",
          name: "alpha",
          unreadCount: 2,
          totalCount: 4,
          latestTitle: "alpha latest",
          latestPreview: "bold news",
          latestImageUrl: "https://img.example/a.png",
          latestAt: "string"
        },
        {
          projectId: "beta",
          name: "beta",
          unreadCount: 1,
          totalCount: 1,
          latestTitle: "beta one",
          latestPreview: "first",
          latestImageUrl: null,
          latestAt: "string"
        },
        {
          projectId: null,
          name: "Unfiled",
          unreadCount: 2,
          totalCount: 2,
          latestTitle: "item 1",
          latestPreview: "body 1",
          latestImageUrl: null,
          latestAt: "string"
        }
      ])
      yield* agent.client.inbox.readAll({ payload: { readThroughToken: (yield* agent.client.inbox.list({ query: {} })).readThroughToken } })
      const after = yield* agent.client.inbox.projects()
      assert.strictEqual(after.totalUnread, 0)
      assert.deepStrictEqual(after.projects.map((p) => p.unreadCount), [0, 0, 0])
    }))
})
