/**
 * Bad input answers the spec's error body with a stable code: never a
 * framework default body, a stack trace, or a 500.
 */
import { assert, layer } from "@effect/vitest"
import { ErrorRecord } from "@herald/api"
import { Effect, Schema } from "effect"
import * as net from "node:net"
import { makeAgent, makePerson, rawFetch, TestServer, TestServerLayer } from "../../../../test/support/server.ts"

const json = (session: string, body: string, extra: Record<string, string> = {}) => ({
  method: "POST",
  headers: { authorization: `Bearer ${session}`, "content-type": "application/json", ...extra },
  body
})

const assertError = (res: { status: number; body: unknown }, status: number, code: string) => {
  assert.strictEqual(res.status, status, JSON.stringify(res.body))
  // Every error body is the spec's Error record, with nothing else in it.
  Schema.decodeUnknownSync(ErrorRecord)(res.body, { onExcessProperty: "error" })
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

  it.effect("an unknown route is a JSON 404; a known one asked with another method a JSON 405 with Allow", () =>
    Effect.gen(function*() {
      assertError(yield* rawFetch("/api/agent/nope"), 404, "NOT_FOUND")
      const otherMethod = yield* rawFetch("/api/agent/auth/status", { method: "PATCH" })
      assertError(otherMethod, 405, "METHOD_NOT_ALLOWED")
      assert.strictEqual(otherMethod.headers.get("allow"), "GET, HEAD")
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

  it.effect("text the database cannot store (U+0000, a lone surrogate) is 400, wherever it is", () =>
    Effect.gen(function*() {
      const { session } = yield* makePerson()
      // Written as JSON escapes, as a client's JSON.stringify sends them.
      for (const name of ["a\\u0000b", "a\\ud800b", "a\\udc00b"]) {
        const res = yield* rawFetch("/api/app/tokens", json(session, `{"name":"${name}","scopes":[]}`))
        assertError(res, 400, "VALIDATION_FAILED")
        assert.deepStrictEqual((res.body as { issues: Array<{ path: string }> }).issues.map((i) => i.path), ["body"])
      }
      const agent = yield* makeAgent(["services:write", "inbox:read"])
      const key = yield* rawFetch("/api/agent/services", {
        method: "POST",
        headers: { authorization: `Bearer ${agent.secret}`, "content-type": "application/json" },
        body: `{"title":"ok","url":"https://status.example.test","meta\\u0000":1}`
      })
      assertError(key, 400, "VALIDATION_FAILED")
      const query = yield* rawFetch("/api/agent/inbox/notifications?project=a%00b", { headers: { authorization: `Bearer ${agent.secret}` } })
      assertError(query, 400, "VALIDATION_FAILED")
      const service = yield* agent.client.services.create({ payload: { title: "hooks", url: "https://status.example.test" } })
      const text = yield* rawFetch(new URL(service.webhookUrl).pathname, {
        method: "POST",
        headers: { "content-type": "text/plain" },
        body: "deploy\u0000done"
      })
      assertError(text, 400, "VALIDATION_FAILED")
      const shouted = yield* rawFetch(new URL(service.webhookUrl).pathname, {
        method: "POST",
        headers: { "content-type": "TEXT/PLAIN" },
        body: "deploy\u0000done"
      })
      assertError(shouted, 400, "VALIDATION_FAILED")

      // However the type is written, or with none at all (the route then reads JSON), the body is checked.
      const body = `{"name":"a\\u0000b","scopes":[]}`
      const untyped = yield* rawFetch("/api/app/tokens", {
        method: "POST",
        headers: { authorization: `Bearer ${session}` },
        body: new TextEncoder().encode(body)
      })
      assertError(untyped, 400, "VALIDATION_FAILED")
      const mixed = yield* rawFetch("/api/app/tokens", json(session, body, { "content-type": "Application/JSON; charset=UTF-8" }))
      assertError(mixed, 400, "VALIDATION_FAILED")
      // A body nested deeper than the global bound is refused by the same scan, before anything
      // parses it (docs/limits.md), even when its only escape is a valid surrogate pair.
      const deep = `{"name":"ok \\ud83d\\ude00","scopes":[],"x":${"[".repeat(5000)}${"]".repeat(5000)}}`
      const refused = yield* rawFetch("/api/app/tokens", json(session, deep))
      assertError(refused, 400, "VALIDATION_FAILED")
      assert.match((refused.body as { issues: Array<{ message: string }> }).issues[0]!.message, /nest deeper than 64/)
    }))

  it.effect("escapes that are storable pass: a surrogate pair, an escaped backslash before u0000", () =>
    Effect.gen(function*() {
      const { session } = yield* makePerson()
      const res = yield* rawFetch("/api/app/tokens", json(session, `{"name":"ok \\ud83d\\ude00 \\\\u0000","scopes":[]}`))
      assert.strictEqual(res.status, 201, JSON.stringify(res.body))
      assert.strictEqual((res.body as { token: { name: string } }).token.name, "ok \u{1F600} \\u0000")
    }))

  it.effect("one unstorable notification among concurrent ones fails only itself", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["notifications:send"])
      const post = (title: string) =>
        rawFetch("/api/agent/notifications", {
          method: "POST",
          headers: { authorization: `Bearer ${agent.secret}`, "content-type": "application/json" },
          body: `{"title":"${title}","body":"b"}`
        })
      const results = yield* Effect.all([...Array.from({ length: 12 }, (_, i) => post(`ok ${i}`)), post("bad \\u0000")], {
        concurrency: "unbounded"
      })
      assert.deepStrictEqual(results.map((r) => r.status), [...Array.from({ length: 12 }, () => 201), 400])
    }))

  it.effect("a request Node cannot parse still gets the spec's error body and a request id", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const raw = (request: string) =>
        Effect.promise(() =>
          new Promise<string>((resolve, reject) => {
            const socket = net.connect(Number(new URL(baseUrl).port), "127.0.0.1", () => socket.write(request))
            let answer = ""
            socket.on("data", (d) => (answer += d))
            socket.on("end", () => resolve(answer))
            socket.on("error", reject)
          }))
      for (
        const request of [
          "GET /healthz HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n",
          "POST /api/app/tokens HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n"
        ]
      ) {
        const answer = yield* raw(request)
        assert.match(answer, /^HTTP\/1\.1 400 /)
        assert.match(answer, /\r\nx-request-id: [0-9a-f-]{36}\r\n/)
        assert.deepStrictEqual(JSON.parse(answer.split("\r\n\r\n")[1]!), { error: "The request could not be read.", code: "BAD_REQUEST" })
      }
      const huge = yield* raw(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`)
      assert.match(huge, /^HTTP\/1\.1 431 /)
      assert.include(huge, "REQUEST_HEADER_FIELDS_TOO_LARGE")
    }))
})
