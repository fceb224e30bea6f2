/**
 * Rate limits and billing over HTTP, on a server whose limits are set small:
 * 429 with the spec's body and headers, per-token budgets, the send limit on
 * POST /notifications only, and GET /billing reporting what remains.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { makeAgent, rawFetch, testServerLayer } from "../../../../test/support/server.ts"

const get = (secret: string, path: string) => rawFetch(path, { headers: { authorization: `Bearer ${secret}` } })
const send = (secret: string) =>
  rawFetch("/api/agent/notifications", {
    method: "POST",
    headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
    body: JSON.stringify({ title: "t", body: "b" })
  })

layer(testServerLayer({ HERALD_RATE_LIMIT_PER_MINUTE: "5", HERALD_SEND_LIMIT_PER_MINUTE: "2" }), {
  excludeTestServices: true,
  timeout: "60 seconds"
})("rate limits", (it) => {
  it.effect("over the per-token limit: 429 RATE_LIMITED with Retry-After and RateLimit headers", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([])
      for (let i = 0; i < 5; i++) {
        const ok = yield* get(agent.secret, "/api/agent/auth/status")
        assert.strictEqual(ok.status, 200)
        assert.strictEqual(ok.headers.get("ratelimit-limit"), "5")
        assert.strictEqual(ok.headers.get("ratelimit-remaining"), String(4 - i))
        assert.isNull(ok.headers.get("retry-after"))
      }
      const limited = yield* get(agent.secret, "/api/agent/auth/status")
      assert.strictEqual(limited.status, 429)
      assert.strictEqual((limited.body as { code: string }).code, "RATE_LIMITED")
      assert.match((limited.body as { error: string }).error, /5 requests a minute/)
      assert.strictEqual(limited.headers.get("retry-after"), "12")
      assert.strictEqual(limited.headers.get("ratelimit-limit"), "5")
      assert.strictEqual(limited.headers.get("ratelimit-remaining"), "0")
      assert.strictEqual(limited.headers.get("ratelimit-reset"), "60")

      // The typed client sees the declared error.
      const error = yield* Effect.flip(agent.client.auth.status())
      assert.strictEqual(error._tag, "RateLimited")

      // Another token of the same person has its own budget.
      const created = yield* agent.app.tokens.create({ payload: { name: "second", scopes: [] } })
      assert.strictEqual((yield* get(created.secret, "/api/agent/auth/status")).status, 200)
    }))

  it.effect("an inbound webhook URL takes the send budget per service; 429 with Retry-After beyond it", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["services:write"])
      const hook = (title: string) =>
        Effect.map(agent.client.services.create({ payload: { title } }), (c) => new URL(c.webhookUrl).pathname)
      const deliver = (path: string) =>
        rawFetch(path, { method: "POST", headers: { "content-type": "text/plain" }, body: "Disk almost full" })
      const grafana = yield* hook("Grafana")
      const first = yield* deliver(grafana)
      assert.strictEqual(first.status, 202)
      assert.deepStrictEqual([first.headers.get("ratelimit-limit"), first.headers.get("ratelimit-remaining")], ["2", "1"])
      assert.strictEqual((yield* deliver(grafana)).status, 202)
      const limited = yield* deliver(grafana)
      assert.strictEqual(limited.status, 429)
      assert.strictEqual((limited.body as { code: string }).code, "RATE_LIMITED")
      assert.match((limited.body as { error: string }).error, /2 deliveries a minute/)
      assert.strictEqual(limited.headers.get("retry-after"), "30")

      // Another service has its own budget, and the agent's token spent none of its own.
      assert.strictEqual((yield* deliver(yield* hook("Sentry"))).status, 202)
      const status = yield* get(agent.secret, "/api/agent/auth/status")
      assert.strictEqual(status.headers.get("ratelimit-remaining"), "2")
    }))

  it.effect("concurrent requests: exactly the budget passes", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([])
      const statuses = yield* Effect.forEach(
        Array.from({ length: 12 }, () => get(agent.secret, "/api/agent/auth/status")),
        (request) => Effect.map(request, (r) => r.status),
        { concurrency: "unbounded" }
      )
      assert.strictEqual(statuses.filter((s) => s === 200).length, 5)
      assert.strictEqual(statuses.filter((s) => s === 429).length, 7)
    }))

  it.effect("sending operations have their own, tighter budget", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["notifications:send", "billing:read"])
      const first = yield* send(agent.secret)
      assert.strictEqual(first.status, 201)
      assert.strictEqual(first.headers.get("ratelimit-limit"), "2")
      assert.strictEqual(first.headers.get("ratelimit-remaining"), "1")
      assert.strictEqual((yield* send(agent.secret)).status, 201)
      const limited = yield* send(agent.secret)
      assert.strictEqual(limited.status, 429)
      assert.match((limited.body as { error: string }).error, /2 sends a minute/)
      assert.strictEqual(limited.headers.get("retry-after"), "30")

      // Reads still pass, and billing reports both budgets without taking a send.
      const billing = yield* get(agent.secret, "/api/agent/billing")
      assert.strictEqual(billing.status, 200)
      const body = billing.body as {
        plan: string
        entitlements: { notifications: { limit: null; used: number }; devices: { limit: null; used: number } }
        rateLimits: { requests: { limit: number; remaining: number; resetAt: string }; sends: { limit: number; remaining: number } }
      }
      assert.strictEqual(body.plan, "free")
      assert.deepStrictEqual(body.entitlements.notifications, { limit: null, used: 2 })
      assert.deepStrictEqual(body.entitlements.devices, { limit: null, used: 0 })
      assert.strictEqual(body.rateLimits.requests.limit, 5)
      // Three sends and this read were requests; the refused send took nothing.
      assert.strictEqual(body.rateLimits.requests.remaining, 2)
      assert.strictEqual(body.rateLimits.sends.limit, 2)
      assert.strictEqual(body.rateLimits.sends.remaining, 0)
      assert.isAbove(Date.parse(body.rateLimits.requests.resetAt), Date.now())
    }))
})

layer(testServerLayer({ HERALD_RATE_LIMIT_PER_MINUTE: "0", HERALD_SEND_LIMIT_PER_MINUTE: "0" }), {
  excludeTestServices: true,
  timeout: "60 seconds"
})("rate limits turned off", (it) => {
  it.effect("a limit of 0 is off: no 429 and no RateLimit headers; billing says null", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["billing:read"])
      for (let i = 0; i < 20; i++) {
        const response = yield* get(agent.secret, "/api/agent/auth/status")
        assert.strictEqual(response.status, 200)
        assert.isNull(response.headers.get("ratelimit-limit"))
      }
      const billing = yield* agent.client.billing.get()
      assert.deepStrictEqual({ ...billing.rateLimits.requests }, { limit: null, remaining: null, resetAt: null })
      assert.deepStrictEqual({ ...billing.rateLimits.sends }, { limit: null, remaining: null, resetAt: null })
    }))

  it.effect("billing needs billing:read", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([])
      const error = yield* Effect.flip(agent.client.billing.get())
      assert.strictEqual(error._tag, "MissingScope")
    }))
})
