/** Read marks over HTTP: read and unread are idempotent, and read-all covers exactly what the list's token does. */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { TestServerLayer, makeAgent } from "../../../../test/support/server.ts"
import { many, plain, post, seed, tamper } from "./inboxSupport.ts"

layer(TestServerLayer, { timeout: "180 seconds", excludeTestServices: true })("inbox read state", (it) => {
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
      const none = yield* empty.client.inbox.list()
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
      const theirs = (yield* other.client.inbox.list()).readThroughToken
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
})
