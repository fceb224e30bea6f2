/**
 * No work before authentication, and bounded work after it
 * (http/BodyGuard.ts): a request that is not let in answers without its body
 * being read, and a body nested past the global bound is refused before
 * anything parses it. Over HTTP, on the whole service.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect } from "effect"
import { generateSecret } from "../../src/auth/Secrets.ts"
import { MAX_JSON_DEPTH } from "../../src/config/Limits.ts"
import { scanJson } from "../../src/http/StorableText.ts"
import { makeAgent, makePerson, TestServerLayer } from "../../../../test/support/server.ts"
import { scopes } from "./activitySupport.ts"
import { rawRequest } from "./rawHttp.ts"

const nested = (depth: number, inner = "") => `${"[".repeat(depth)}${inner}${"]".repeat(depth)}`

// Just under 1 MiB (every route's limit) of nested arrays around a NUL escape:
// the body the probe sent, which the old edge parsed and scanned before the token.
const probe = `{"props":{"title":"\\u0000","x":${nested(524_000)}}}`

const json = (authorization?: string) => ({
  "content-type": "application/json",
  ...(authorization === undefined ? {} : { authorization })
})

const assertUnauthorized = (answer: { status: number; body: unknown }, label: string) => {
  assert.strictEqual(answer.status, 401, `${label}: ${JSON.stringify(answer.body)}`)
  assert.strictEqual((answer.body as { code: string }).code, "UNAUTHORIZED", label)
}

describe("the JSON scan", () => {
  it("counts nesting outside strings only, and refuses past the bound", () => {
    assert.strictEqual(scanJson(nested(MAX_JSON_DEPTH), 64), "ok")
    assert.strictEqual(scanJson(nested(MAX_JSON_DEPTH + 1), 64), "tooDeep")
    assert.strictEqual(scanJson(`{"a":${nested(30, `{"b":${nested(33)}}`)}}`, 64), "tooDeep")
    assert.strictEqual(scanJson(`["${"[".repeat(100)}", "\\"[[[[", {"k\\\\": [1]}]`, 3), "ok")
    assert.strictEqual(scanJson(nested(500_000), 64), "tooDeep")
  })

  it("finds text the database cannot store in keys and values, and passes what it can", () => {
    for (const text of [`{"a":"\\u0000"}`, `{"\\u0000":1}`, `["\\uD800"]`, `["\\udc00x"]`, `["\\ud83d\\u0041"]`, `["\\ud83d"]`]) {
      assert.strictEqual(scanJson(text, 64), "unstorable", text)
    }
    for (const text of [`["\\ud83d\\ude00"]`, `["\\\\u0000"]`, `["u0000", "\\u0041\\n"]`, `{"a":1}`, `{`]) {
      assert.strictEqual(scanJson(text, 64), "ok", text)
    }
  })
})

layer(TestServerLayer, { timeout: "120 seconds", excludeTestServices: true })("authentication before the body", (it) => {
  it.effect("an unauthenticated 1 MiB nested body with a NUL escape answers 401, not 400, on both APIs", () =>
    Effect.gen(function*() {
      const cases = [
        ["no bearer", "/api/agent/activities", undefined],
        ["malformed bearer", "/api/agent/activities", "Bearer hld_nope"],
        ["well-formed unknown token", "/api/agent/activities", `Bearer ${generateSecret("hld")}`],
        ["no session", "/api/app/tokens", undefined],
        ["unknown session", "/api/app/tokens", `Bearer ${generateSecret("hls")}`]
      ] as const
      for (const [label, path, authorization] of cases) {
        assertUnauthorized(yield* rawRequest({ method: "POST", path, headers: json(authorization), body: probe }), label)
      }
    }))

  it.effect("the answer comes without the body: a body declared but never finished still gets its 401", () =>
    Effect.gen(function*() {
      // Only the first 64 KiB of a declared ~1 MiB: a server that read the body first would wait for the rest.
      const start = probe.slice(0, 64 * 1024)
      const declaredLength = Buffer.byteLength(probe)
      for (const [path, authorization] of [["/api/agent/activities", `Bearer ${generateSecret("hld")}`], ["/api/app/tokens", undefined]] as const) {
        const answer = yield* rawRequest({ method: "POST", path, headers: json(authorization), body: start, declaredLength })
        assertUnauthorized(answer, path)
      }
      // The inbound webhook's credential is its URL: a token without the shape answers 404 the same way.
      const hook = yield* rawRequest({ method: "POST", path: "/hooks/hlw_nope", headers: json(), body: start.slice(0, 1024), declaredLength: 60_000 })
      assert.deepStrictEqual([hook.status, hook.body], [404, { error: "Unknown webhook.", code: "NOT_FOUND" }])
    }))

  it.effect("once authenticated, the body is read and text the database cannot store is still 400", () =>
    Effect.gen(function*() {
      const { session } = yield* makePerson()
      const answer = yield* rawRequest({
        method: "POST",
        path: "/api/app/tokens",
        headers: json(`Bearer ${session}`),
        body: `{"name":"a\\u0000b","scopes":[]}`
      })
      assert.strictEqual(answer.status, 400)
      assert.deepStrictEqual((answer.body as { issues: unknown }).issues, [{
        path: "body",
        message: "Text must not contain U+0000 (NUL) or an unpaired UTF-16 surrogate."
      }])
    }))

  it.effect("an authenticated live-activity start with props nested 500,000 deep answers 400 VALIDATION_FAILED at the bound", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      const body = `{"props":{"title":"Deploy","steps":[${nested(500_000)}]}}`
      const answer = yield* rawRequest({ method: "POST", path: "/api/agent/activities", headers: json(`Bearer ${agent.secret}`), body })
      assert.strictEqual(answer.status, 400, JSON.stringify(answer.body))
      assert.deepStrictEqual(answer.body, {
        error: "The request failed validation.",
        code: "VALIDATION_FAILED",
        issues: [{ path: "body", message: `JSON must not nest deeper than ${MAX_JSON_DEPTH} levels.` }]
      })
      // Inside the bound, the route's own rule still speaks (props nest at most 8 levels).
      const nine = yield* rawRequest({
        method: "POST",
        path: "/api/agent/activities",
        headers: json(`Bearer ${agent.secret}`),
        body: `{"props":{"title":"Deploy","steps":[${nested(9)}]}}`
      })
      assert.strictEqual(nine.status, 400)
      assert.match(JSON.stringify(nine.body), /nested at most 8 levels/)
    }))
})
