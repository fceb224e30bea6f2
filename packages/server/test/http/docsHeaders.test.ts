/**
 * The docs pages' headers (issue 20, item 5): UTF-8 HTML, a
 * Content-Security-Policy that lets exactly the page's own scripts run (by
 * hash, nothing remote) and forbids framing, and `nosniff` on every response.
 * The page itself cannot run here (no browser, no network): the test checks
 * that every script the page holds is allowed and nothing else is.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { createHash } from "node:crypto"
import { makeAgent, rawFetch, TestServerLayer } from "../../../../test/support/server.ts"
import { rawRequest } from "./rawHttp.ts"

const directives = (csp: string) =>
  new Map(csp.split(";").map((d) => d.trim().split(/\s+/)).map(([name, ...values]) => [name!, values]))

const sha256 = (text: string) => `'sha256-${createHash("sha256").update(text).digest("base64")}'`

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("docs pages' headers", (it) => {
  for (const path of ["/api/agent/docs", "/api/app/docs"]) {
    it.effect(`${path}: utf-8 HTML, a policy naming exactly its own scripts, no framing, nosniff`, () =>
      Effect.gen(function*() {
        const page = yield* rawFetch(path)
        assert.strictEqual(page.status, 200)
        assert.strictEqual(page.headers.get("content-type"), "text/html; charset=utf-8")
        assert.strictEqual(page.headers.get("x-content-type-options"), "nosniff")
        const html = page.body as string
        // Nothing loaded from elsewhere: no script with a source, no remote font.
        assert.notMatch(html, /<script[^>]*\ssrc=/)
        assert.include(html, "withDefaultFonts\":false")
        const scripts = Array.from(html.matchAll(/<script>([\s\S]*?)<\/script>/g), (m) => m[1]!)
        assert.strictEqual(scripts.length, 2)

        const csp = directives(page.headers.get("content-security-policy") ?? "")
        assert.deepStrictEqual(csp.get("default-src"), ["'none'"])
        assert.deepStrictEqual(csp.get("script-src"), scripts.map(sha256))
        assert.deepStrictEqual(csp.get("frame-ancestors"), ["'none'"])
        assert.deepStrictEqual(csp.get("connect-src"), ["'self'"])
        assert.deepStrictEqual(csp.get("base-uri"), ["'none'"])
        assert.deepStrictEqual(csp.get("form-action"), ["'none'"])
        // No other origin is named anywhere in the policy.
        assert.notMatch(page.headers.get("content-security-policy")!, /https?:|\*/)
        // The same page again: the same policy (computed once per page).
        const again = yield* rawFetch(path)
        assert.strictEqual(again.headers.get("content-security-policy"), page.headers.get("content-security-policy"))
      }))
  }

  // Issue 30: `/api/agent/docs/` reached the page without its headers. Every spelling the router
  // serves as the page gets the page's headers; every other spelling is a 404 with no page.
  it.effect("every spelling of a docs page: the same headers, or a 404", () =>
    Effect.gen(function*() {
      for (const base of ["/api/agent/docs", "/api/app/docs"]) {
        const page = yield* rawFetch(base)
        const headersOf = (r: typeof page) =>
          ["content-type", "content-security-policy", "x-content-type-options"].map((h) => r.headers.get(h))
        for (const path of [`${base}/`, `${base}?x=1`, `${base}/?x=1`, `${base}?`, `${base}/#top`]) {
          const same = yield* rawFetch(path)
          assert.strictEqual(same.status, 200, path)
          assert.deepStrictEqual(headersOf(same), headersOf(page), path)
          assert.strictEqual(same.body, page.body, path)
        }
        for (const path of [`${base}//`, `${base}/.`, `${base}/./`, `${base};x`, base.toUpperCase(), `${base}/index.html`,
          base.replace("docs", "%64ocs"), `${base}%2f`]) {
          const other = yield* rawRequest({ method: "GET", path })
          assert.strictEqual(other.status, 404, path)
          assert.notInclude(String(other.headers["content-type"]), "text/html", path)
          assert.isUndefined(other.headers["content-security-policy"], path)
        }
      }
      // The OpenAPI documents: JSON under every spelling the router serves, never HTML.
      for (const base of ["/api/agent/openapi.json", "/api/app/openapi.json", "/hooks/openapi.json", "/oauth/openapi.json"]) {
        for (const path of [base, `${base}/`, `${base}?x=1`]) {
          const doc = yield* rawFetch(path)
          assert.strictEqual(doc.status, 200, path)
          assert.match(doc.headers.get("content-type") ?? "", /^application\/json/, path)
          assert.strictEqual(doc.headers.get("x-content-type-options"), "nosniff", path)
        }
      }
    }))

  it.effect("nosniff on every response: JSON, operator routes, errors, no route, refused at the edge", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["interactions:read"])
      const ok = yield* rawFetch("/api/agent/interactions", { headers: { authorization: `Bearer ${agent.secret}` } })
      assert.strictEqual(ok.status, 200)
      const responses = [ok, yield* rawFetch("/healthz"), yield* rawFetch("/api/agent/interactions"), yield* rawFetch("/no/such/route"),
        // Refused at the edge before routing (not the canonical spelling).
        yield* rawFetch("/API/AGENT/AUTH/STATUS")]
      assert.deepStrictEqual(responses.map((r) => r.status), [200, 200, 401, 404, 404])
      for (const r of responses) {
        assert.strictEqual(r.headers.get("x-content-type-options"), "nosniff")
        assert.isNull(r.headers.get("content-security-policy"))
      }
    }))
})
