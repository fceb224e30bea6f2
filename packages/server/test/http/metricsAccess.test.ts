/**
 * Who may read `/metrics` (config/MetricsConfig.ts): with a metrics token,
 * only a scrape sending it as a bearer (401 otherwise); with a metrics port,
 * only the metrics listener serves it (404 on the API listener). Unset, it
 * stays on the API listener for anyone (ops.test.ts).
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import { HttpServer } from "effect/http"
import { MetricsListener } from "../../src/runtime/MetricsListener.ts"
import { rawFetch, testServerLayer } from "../../../../test/support/server.ts"

const token = "metrics-scrape-token-4f1c0a"

const bearer = (value: string) => ({ headers: { authorization: value } })

const isMetrics = (answer: { readonly status: number; readonly body: unknown }) =>
  answer.status === 200 && typeof answer.body === "string" && answer.body.includes("herald_http_requests_total")

layer(testServerLayer({ HERALD_METRICS_TOKEN: token }), { timeout: "120 seconds", excludeTestServices: true })("metrics behind a token", (it) => {
  it.effect("no bearer or a wrong one answers 401; the token answers the metrics", () =>
    Effect.gen(function*() {
      for (const init of [{}, bearer(`Bearer ${token}x`), bearer(`Bearer ${token.slice(1)}`), bearer(`Basic ${token}`), bearer("Bearer ")]) {
        const refused = yield* rawFetch("/metrics", init)
        assert.strictEqual(refused.status, 401, JSON.stringify(init))
        assert.strictEqual((refused.body as { code: string }).code, "UNAUTHORIZED")
        assert.strictEqual(refused.headers.get("www-authenticate"), "Bearer realm=\"herald-metrics\"")
        assert.notInclude(JSON.stringify(refused.body), "herald_")
      }
      assert.isTrue(isMetrics(yield* rawFetch("/metrics", bearer(`Bearer ${token}`))))
      assert.isTrue(isMetrics(yield* rawFetch("/metrics", bearer(`bearer ${token}`))))
      // Nothing else moved: the probes stay open, and no metrics listener was started.
      assert.strictEqual((yield* rawFetch("/healthz")).status, 200)
      assert.isTrue(Option.isNone((yield* MetricsListener).address))
    }))
})

layer(testServerLayer({ HERALD_METRICS_PORT: "0", HERALD_METRICS_TOKEN: token }), { timeout: "120 seconds", excludeTestServices: true })(
  "metrics on a listener of their own",
  (it) => {
    it.effect("the API listener has no /metrics; the metrics listener serves it, behind the token", () =>
      Effect.gen(function*() {
        const { address } = yield* MetricsListener
        assert.isTrue(Option.isSome(address))
        const metricsUrl = HttpServer.formatAddress(Option.getOrThrow(address))
        assert.match(metricsUrl, /^http:\/\/127\.0\.0\.1:\d+$/)
        const fetchMetrics = (path: string, init: RequestInit = {}) =>
          Effect.promise(async () => {
            const response = await fetch(`${metricsUrl}${path}`, init)
            const text = await response.text()
            return { status: response.status, body: text as unknown, headers: response.headers }
          })

        const onApi = yield* rawFetch("/metrics", bearer(`Bearer ${token}`))
        assert.strictEqual(onApi.status, 404)
        assert.strictEqual((onApi.body as { code: string }).code, "NOT_FOUND")
        assert.strictEqual((yield* rawFetch("/healthz")).status, 200)

        assert.strictEqual((yield* fetchMetrics("/metrics")).status, 401)
        assert.strictEqual((yield* fetchMetrics("/metrics", bearer("Bearer wrong"))).status, 401)
        const scraped = yield* fetchMetrics("/metrics", bearer(`Bearer ${token}`))
        assert.isTrue(isMetrics(scraped), String(scraped.body).slice(0, 300))
        assert.include(scraped.headers.get("content-type") ?? "", "text/plain")
        // The metrics listener serves nothing else.
        for (const [method, path] of [["GET", "/"], ["GET", "/healthz"], ["GET", "/api/agent/auth/status"], ["GET", "/oauth/register"], ["POST", "/metrics"]]) {
          const other = yield* fetchMetrics(path!, { method: method!, headers: { authorization: `Bearer ${token}` } })
          assert.strictEqual(other.status, 404, path)
          assert.strictEqual(JSON.parse(other.body as string).code, "NOT_FOUND", path)
        }
      }))
  }
)
