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
