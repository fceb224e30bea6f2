/**
 * A known path asked with a method it does not take answers 405
 * `METHOD_NOT_ALLOWED` with an `Allow` header listing the methods it does
 * take; an unknown path stays 404. Over HTTP, on the whole service.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { opsRoutes, routes } from "../../src/http/Routes.ts"
import { rawFetch, TestServerLayer } from "../../../../test/support/server.ts"

layer(TestServerLayer, { timeout: "120 seconds", excludeTestServices: true })("method not allowed", (it) => {
  it.effect("DELETE on a GET-only path is 405 with Allow and the spec's body", () =>
    Effect.gen(function*() {
      const res = yield* rawFetch("/api/agent/auth/status", { method: "DELETE" })
      assert.strictEqual(res.status, 405)
      assert.strictEqual(res.headers.get("allow"), "GET, HEAD")
      assert.deepStrictEqual(res.body, { error: "Method not allowed.", code: "METHOD_NOT_ALLOWED" })
      assert.isString(res.headers.get("x-request-id"))
    }))

  it.effect("a path with parameters lists every method of its route", () =>
    Effect.gen(function*() {
      const services = yield* rawFetch("/api/agent/services/svc_0000000000000000000000000z", { method: "PUT" })
      assert.strictEqual(services.status, 405)
      assert.strictEqual(services.headers.get("allow"), "DELETE, GET, HEAD, PATCH")
      const hook = yield* rawFetch("/hooks/hlw_whatever", { method: "GET" })
      assert.deepStrictEqual([hook.status, hook.headers.get("allow")], [405, "POST"])
      // A literal and a parameter sibling: POST's `read-all` and GET's `:id`.
      const readAll = yield* rawFetch("/api/agent/inbox/notifications/read-all", { method: "DELETE" })
      assert.deepStrictEqual([readAll.status, readAll.headers.get("allow")], [405, "GET, HEAD, POST"])
      const trailing = yield* rawFetch("/api/app/tokens/", { method: "PATCH" })
      assert.deepStrictEqual([trailing.status, trailing.headers.get("allow")], [405, "GET, HEAD, POST"])
    }))

  it.effect("operator and docs routes answer 405 too", () =>
    Effect.gen(function*() {
      for (const path of ["/healthz", "/readyz", "/metrics", "/api/agent/openapi.json", "/api/agent/docs"]) {
        const res = yield* rawFetch(path, { method: "POST" })
        assert.deepStrictEqual([res.status, res.headers.get("allow")], [405, "GET, HEAD"], path)
      }
    }))

  it.effect("every route of the table answers its own method (no stale entry)", () =>
    Effect.gen(function*() {
      for (const [method, path] of opsRoutes) {
        const res = yield* rawFetch(path, { method })
        assert.strictEqual(res.status, 200, path)
      }
      assert.deepStrictEqual(routes.methodsOf("/api/agent/tokens/tok_1?x=1"), ["DELETE"])
    }))

  it.effect("an unknown path stays 404, and a 404 from a handler stays a 404", () =>
    Effect.gen(function*() {
      const unknown = yield* rawFetch("/api/agent/nothing-here", { method: "DELETE" })
      assert.deepStrictEqual([unknown.status, unknown.headers.get("allow")], [404, null])
      assert.deepStrictEqual(unknown.body, { error: "No such route.", code: "NOT_FOUND" })
      const hook = yield* rawFetch("/hooks/hlw_unknown", { method: "POST", headers: { "content-type": "text/plain" }, body: "hi" })
      assert.strictEqual(hook.status, 404)
      assert.strictEqual(hook.headers.get("allow"), null)
    }))
})
