/**
 * Bad input answers the spec's error body with a stable code: never a
 * framework default body, a stack trace, or a 500.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { makeAgent, makePerson, rawFetch, TestServerLayer } from "../../../../test/support/server.ts"

const json = (session: string, body: string, extra: Record<string, string> = {}) => ({
  method: "POST",
  headers: { authorization: `Bearer ${session}`, "content-type": "application/json", ...extra },
  body
})

const assertError = (res: { status: number; body: unknown }, status: number, code: string) => {
  assert.strictEqual(res.status, status, JSON.stringify(res.body))
  const body = res.body as Record<string, unknown>
  assert.strictEqual(body.code, code)
  assert.isString(body.error)
  assert.notInclude(JSON.stringify(body), "    at ")
}

layer(TestServerLayer, { timeout: "120 seconds", excludeTestServices: true })("bad input", (it) => {
  it.effect("malformed JSON is 400 VALIDATION_FAILED", () =>
    Effect.gen(function*() {
      const { session } = yield* makePerson()
      const res = yield* rawFetch("/api/app/tokens", json(session, "{\"name\": "))
      assertError(res, 400, "VALIDATION_FAILED")
    }))

  it.effect("a wrong type names the field in issues", () =>
    Effect.gen(function*() {
      const { session } = yield* makePerson()
      const res = yield* rawFetch("/api/app/tokens", json(session, JSON.stringify({ name: 42, scopes: [] })))
      assertError(res, 400, "VALIDATION_FAILED")
      const issues = (res.body as { issues: Array<{ path: string; message: string }> }).issues
      assert.isTrue(issues.some((i) => i.path === "body.name"), JSON.stringify(issues))
    }))

  it.effect("an unknown scope is refused", () =>
    Effect.gen(function*() {
      const { session } = yield* makePerson()
      const res = yield* rawFetch("/api/app/tokens", json(session, JSON.stringify({ name: "x", scopes: ["root:all"] })))
      assertError(res, 400, "VALIDATION_FAILED")
      const issues = (res.body as { issues: Array<{ path: string }> }).issues
      assert.isTrue(issues.some((i) => i.path === "body.scopes[0]"), JSON.stringify(issues))
    }))

  it.effect("an unknown field is 400 and says which", () =>
    Effect.gen(function*() {
      const { session } = yield* makePerson()
      const res = yield* rawFetch("/api/app/tokens", json(session, JSON.stringify({ name: "x", scopes: [], admin: true })))
      assertError(res, 400, "VALIDATION_FAILED")
      assert.include(JSON.stringify(res.body), "admin")
    }))

  it.effect("a missing body and a non-object body are 400", () =>
    Effect.gen(function*() {
      const { session } = yield* makePerson()
      assertError(yield* rawFetch("/api/app/tokens", json(session, "")), 400, "VALIDATION_FAILED")
      assertError(yield* rawFetch("/api/app/tokens", json(session, "[1,2]")), 400, "VALIDATION_FAILED")
      assertError(yield* rawFetch("/api/app/tokens", json(session, "null")), 400, "VALIDATION_FAILED")
    }))

  it.effect("an expiry in the past is 400", () =>
    Effect.gen(function*() {
      const { session } = yield* makePerson()
      const res = yield* rawFetch("/api/app/tokens", json(session, JSON.stringify({ name: "x", scopes: [], expiresAt: "2001-01-01T00:00:00Z" })))
      assertError(res, 400, "VALIDATION_FAILED")
      const bad = yield* rawFetch("/api/app/tokens", json(session, JSON.stringify({ name: "x", scopes: [], expiresAt: "tomorrow" })))
      assertError(bad, 400, "VALIDATION_FAILED")
    }))

  it.effect("a body over 1 MiB is 413 PAYLOAD_TOO_LARGE, declared or chunked", () =>
    Effect.gen(function*() {
      const { session } = yield* makePerson()
      const big = JSON.stringify({ name: "x".repeat(1024 * 1024 + 10), scopes: [] })
      assertError(yield* rawFetch("/api/app/tokens", json(session, big)), 413, "PAYLOAD_TOO_LARGE")
      const chunks = new ReadableStream<Uint8Array>({
        start(controller) {
          const chunk = new TextEncoder().encode("x".repeat(64 * 1024))
          for (let i = 0; i < 20; i++) controller.enqueue(chunk)
          controller.close()
        }
      })
      const chunked = yield* rawFetch("/api/app/tokens", {
        method: "POST",
        headers: { authorization: `Bearer ${session}`, "content-type": "application/json" },
        body: chunks,
        duplex: "half"
      } as RequestInit)
      assertError(chunked, 413, "PAYLOAD_TOO_LARGE")
    }))

  it.effect("a body in another content type is 415 UNSUPPORTED_MEDIA_TYPE", () =>
    Effect.gen(function*() {
      const { session } = yield* makePerson()
      const res = yield* rawFetch("/api/app/tokens", json(session, "name=x", { "content-type": "application/x-www-form-urlencoded" }))
      assertError(res, 415, "UNSUPPORTED_MEDIA_TYPE")
    }))

  it.effect("a malformed path id is 400 before any lookup", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["tokens:manage", "devices:write"])
      const auth = { authorization: `Bearer ${agent.secret}` }
      assertError(yield* rawFetch("/api/agent/tokens/dev_123", { method: "DELETE", headers: auth }), 400, "VALIDATION_FAILED")
      assertError(yield* rawFetch("/api/agent/devices/%20drop", { method: "DELETE", headers: auth }), 400, "VALIDATION_FAILED")
    }))

  it.effect("an unknown route and an unknown method are JSON 404s", () =>
    Effect.gen(function*() {
      assertError(yield* rawFetch("/api/agent/nope"), 404, "NOT_FOUND")
      assertError(yield* rawFetch("/api/agent/auth/status", { method: "PATCH" }), 404, "NOT_FOUND")
    }))

  it.effect("every response carries a request id, echoing a sane incoming one", () =>
    Effect.gen(function*() {
      const fresh = yield* rawFetch("/healthz")
      assert.match(fresh.headers.get("x-request-id") ?? "", /^[0-9a-f-]{36}$/)
      const echoed = yield* rawFetch("/api/agent/auth/status", { headers: { "x-request-id": "trace-42" } })
      assert.strictEqual(echoed.headers.get("x-request-id"), "trace-42")
      const replaced = yield* rawFetch("/healthz", { headers: { "x-request-id": "bad id with spaces" } })
      assert.notStrictEqual(replaced.headers.get("x-request-id"), "bad id with spaces")
    }))
})
