/**
 * `GET /tokens` is bounded: pages of `limit` (default 50, at most 100) with a
 * `nextCursor`, on the Agent API and the Person API alike, over HTTP with the
 * typed client.
 */
import { assert, layer } from "@effect/vitest"
import { TOKENS_LIST_LIMIT } from "@herald/api"
import { Effect } from "effect"
import { makeAgent, rawFetch, TestServerLayer } from "../../../../test/support/server.ts"

layer(TestServerLayer, { timeout: "120 seconds", excludeTestServices: true })("token list paging", (it) => {
  it.effect("pages of the default size, newest first, each token once, then a null cursor", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["tokens:manage"])
      const extra = TOKENS_LIST_LIMIT.default + 2
      for (let i = 0; i < extra; i++) yield* agent.app.tokens.create({ payload: { name: `t${i}`, scopes: [] } })
      const first = yield* agent.client.tokens.list()
      assert.strictEqual(first.items.length, TOKENS_LIST_LIMIT.default)
      assert.strictEqual(first.items[0]!.name, `t${extra - 1}`)
      assert.strictEqual(first.nextCursor, first.items[first.items.length - 1]!.id)
      const second = yield* agent.client.tokens.list({ query: { cursor: first.nextCursor! } })
      assert.deepStrictEqual(second.items.map((t) => t.name), ["t1", "t0", "test agent"])
      assert.isNull(second.nextCursor)
      // The Person API's list pages the same way, with an explicit limit.
      const person = yield* agent.app.tokens.list({ query: { limit: 100 } })
      assert.deepStrictEqual(person.items.map((t) => t.id), [...first.items, ...second.items].map((t) => t.id))
      assert.isNull(person.nextCursor)
      const small = yield* agent.app.tokens.list({ query: { limit: 3 } })
      assert.strictEqual(small.items.length, 3)
      assert.strictEqual(small.nextCursor, small.items[2]!.id)
    }))

  it.effect("a limit out of bounds is 400 VALIDATION_FAILED; another account's cursor is an empty page", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["tokens:manage"])
      const stranger = yield* makeAgent([])
      for (const limit of ["0", "101", "x"]) {
        const res = yield* rawFetch(`/api/agent/tokens?limit=${limit}`, { headers: { authorization: `Bearer ${agent.secret}` } })
        assert.strictEqual(res.status, 400, limit)
        assert.strictEqual((res.body as { code: string }).code, "VALIDATION_FAILED")
      }
      const foreign = yield* agent.client.tokens.list({ query: { cursor: stranger.token.id } })
      assert.deepStrictEqual({ items: foreign.items, nextCursor: foreign.nextCursor }, { items: [], nextCursor: null })
    }))

  it.effect("the OpenAPI document states the bound", () =>
    Effect.gen(function*() {
      const doc = (yield* rawFetch("/api/agent/openapi.json")).body as {
        paths: Record<string, { get: { parameters: ReadonlyArray<{ name: string }>; description: string } }>
      }
      const list = doc.paths["/api/agent/tokens"]!.get
      assert.deepStrictEqual(list.parameters.map((p) => p.name).sort(), ["cursor", "limit"])
      assert.include(list.description, `1–${TOKENS_LIST_LIMIT.max} (default ${TOKENS_LIST_LIMIT.default})`)
    }))
})
