/**
 * The per-token rate limits hold across nodes: two nodes on one database
 * take from the same budgets, so one token sending through both gets the
 * limit, not twice it, and concurrent requests on both never take more than
 * the budget. The inbound per-service budget and GET /billing are shared the
 * same way, and the sweep deletes only the budgets that are whole again.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { RateLimiter } from "../../src/billing/RateLimiter.ts"
import { makeAgent, rawFetch } from "../../../../test/support/server.ts"
import { on, TwoNodes, twoNodesLayer } from "../http/twoNodes.ts"

// One send every 15 s and one request every 6 s come back: none refills while a test runs.
const SENDS = 4
const REQUESTS = 10

const send = (secret: string) =>
  rawFetch("/api/agent/notifications", {
    method: "POST",
    headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
    body: JSON.stringify({ title: "t", body: "b" })
  })
const get = (secret: string, path: string) => rawFetch(path, { headers: { authorization: `Bearer ${secret}` } })

layer(twoNodesLayer({ HERALD_RATE_LIMIT_PER_MINUTE: String(REQUESTS), HERALD_SEND_LIMIT_PER_MINUTE: String(SENDS) }), {
  excludeTestServices: true,
  timeout: "90 seconds"
})("rate limits across two nodes", (it) => {
  it.effect("one token sending through both nodes in turn: the send limit passes, not twice it; refusals are 429 with Retry-After", () =>
    Effect.gen(function*() {
      const [a, b] = yield* TwoNodes
      const agent = yield* on(a, makeAgent(["notifications:send"]))
      const answers = yield* Effect.forEach(Array.from({ length: 10 }, (_, i) => i), (i) => on(i % 2 === 0 ? a : b, send(agent.secret)))

      assert.deepStrictEqual(answers.map((r) => r.status), [201, 201, 201, 201, 429, 429, 429, 429, 429, 429])
      // One budget: what is left counts down whichever node answers.
      assert.deepStrictEqual(answers.slice(0, SENDS).map((r) => r.headers.get("ratelimit-remaining")), ["3", "2", "1", "0"])
      for (const refused of answers.slice(SENDS)) {
        assert.strictEqual((refused.body as { code: string }).code, "RATE_LIMITED")
        assert.match((refused.body as { error: string }).error, /4 sends a minute/)
        assert.strictEqual(refused.headers.get("ratelimit-limit"), String(SENDS))
        assert.strictEqual(refused.headers.get("ratelimit-remaining"), "0")
        const retryAfter = Number(refused.headers.get("retry-after"))
        assert.isAtLeast(retryAfter, 1)
        assert.isAtMost(retryAfter, 15)
      }
      // What was sent: exactly the accepted ones, whichever node took them.
      const sql = yield* on(a, SqlClient.SqlClient)
      const sent = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM notifications WHERE user_id = ${agent.person.id}`
      assert.strictEqual(sent[0]!.n, SENDS)
    }))

  it.effect("concurrent sends on both nodes: exactly the budget passes", () =>
    Effect.gen(function*() {
      const [a, b] = yield* TwoNodes
      const agent = yield* on(a, makeAgent(["notifications:send"]))
      const statuses = yield* Effect.forEach(
        Array.from({ length: 12 }, (_, i) => on(i % 2 === 0 ? a : b, send(agent.secret))),
        (request) => Effect.map(request, (r) => r.status),
        { concurrency: "unbounded" }
      )
      assert.strictEqual(statuses.filter((s) => s === 201).length, SENDS)
      assert.strictEqual(statuses.filter((s) => s === 429).length, 12 - SENDS)
    }))

  it.effect("the request budget is shared too, and GET /billing on one node reports what the other took", () =>
    Effect.gen(function*() {
      const [a, b] = yield* TwoNodes
      const agent = yield* on(a, makeAgent(["billing:read", "notifications:send"]))
      yield* on(a, send(agent.secret))
      yield* on(a, send(agent.secret))
      const billing = yield* on(b, get(agent.secret, "/api/agent/billing"))
      assert.strictEqual(billing.status, 200)
      const limits = (billing.body as { rateLimits: { requests: { remaining: number }; sends: { remaining: number } } }).rateLimits
      // Two sends on the first node, then this read on the second.
      assert.deepStrictEqual([limits.requests.remaining, limits.sends.remaining], [REQUESTS - 3, SENDS - 2])

      const statuses = yield* Effect.forEach(Array.from({ length: 10 }, (_, i) => i), (i) =>
        Effect.map(on(i % 2 === 0 ? b : a, get(agent.secret, "/api/agent/auth/status")), (r) => r.status))
      assert.deepStrictEqual(statuses, [200, 200, 200, 200, 200, 200, 200, 429, 429, 429])
    }))

  it.effect("an inbound webhook URL's per-service budget is shared by both nodes", () =>
    Effect.gen(function*() {
      const [a, b] = yield* TwoNodes
      const agent = yield* on(a, makeAgent(["services:write"]))
      const created = yield* agent.client.services.create({ payload: { title: "Grafana" } })
      const path = new URL(created.webhookUrl).pathname
      const deliver = rawFetch(path, { method: "POST", headers: { "content-type": "text/plain" }, body: "Disk almost full" })
      const answers = yield* Effect.forEach(Array.from({ length: 8 }, (_, i) => i), (i) => on(i % 2 === 0 ? b : a, deliver))
      assert.deepStrictEqual(answers.map((r) => r.status), [202, 202, 202, 202, 429, 429, 429, 429])
      const refused = answers[SENDS]!
      assert.match((refused.body as { error: string }).error, /4 deliveries a minute/)
      assert.isNotNull(refused.headers.get("retry-after"))
    }))

  it.effect("concurrent takes on one node, taken together, each get what they would alone", () =>
    Effect.gen(function*() {
      const [a, b] = yield* TwoNodes
      const limiter = yield* on(a, RateLimiter)
      const key = `tok_batch${Date.now()}`
      const now = Date.now()
      const takes = (n: number, sends: boolean) =>
        Effect.all(Array.from({ length: n }, () => limiter.take(key, sends, now)), { concurrency: "unbounded" })

      const first = yield* takes(3, true)
      assert.deepStrictEqual(first.map((o) => o.allowed), [true, true, true])
      // The send budget (the tighter) reports each its own place in the batch.
      assert.deepStrictEqual(first.map((o) => o.reported?.remaining).sort(), [1, 2, 3])
      // More than is left at once: taken one by one, in order, so exactly what is left passes.
      const second = yield* takes(3, true)
      assert.deepStrictEqual(second.map((o) => o.allowed).sort(), [false, false, true])
      assert.deepStrictEqual(second.filter((o) => !o.allowed).map((o) => o.refused), ["sends", "sends"])
      // Requests alone still fit, and the other node sees the same budget.
      const reads = yield* takes(5, false)
      assert.deepStrictEqual(reads.map((o) => o.reported?.remaining).sort(), [1, 2, 3, 4, 5])
      const elsewhere = yield* on(b, Effect.flatMap(RateLimiter, (other) => other.take(key, false, now)))
      assert.deepStrictEqual([elsewhere.allowed, elsewhere.reported?.remaining], [true, 0])
      assert.isFalse((yield* limiter.take(key, false, now)).allowed)
    }))

  it.effect("takes whose statements run out of the order their clocks were read: the whole budget still passes", () =>
    Effect.gen(function*() {
      const [a, b] = yield* TwoNodes
      const key = `tok_order${Date.now()}`
      const now = Date.now()
      // A request read its clock 5 ms after three others, and its statement (on the other node) ran first:
      // measured from their own earlier time, the last of the three lost the budget's last unit.
      const later = yield* on(b, Effect.flatMap(RateLimiter, (limiter) => limiter.take(key, true, now + 5)))
      const limiter = yield* on(a, RateLimiter)
      const earlier = yield* Effect.forEach([1, 2, 3], () => limiter.take(key, true, now))
      assert.deepStrictEqual([later, ...earlier].map((o) => o.allowed), [true, true, true, true])
      assert.deepStrictEqual(earlier.map((o) => o.reported?.remaining), [2, 1, 0])
      const over = yield* limiter.take(key, true, now)
      assert.deepStrictEqual([over.allowed, over.refused], [false, "sends"])
    }))

  it.effect("the sweep deletes the budgets that are whole again, and only those", () =>
    Effect.gen(function*() {
      const [a] = yield* TwoNodes
      const agent = yield* on(a, makeAgent([]))
      assert.strictEqual((yield* on(a, get(agent.secret, "/api/agent/auth/status"))).status, 200)
      const sql = yield* on(a, SqlClient.SqlClient)
      const stored = on(a, Effect.map(
        sql<{ n: number }>`SELECT count(*)::int AS n FROM rate_limit_budgets WHERE key = ${agent.token.id}`,
        ([row]) => row!.n
      ))
      const limiter = yield* on(a, RateLimiter)
      const sweepAt = (at: number) =>
        Effect.gen(function*() {
          yield* TestClock.setTime(at)
          yield* limiter.sweep
        }).pipe(Effect.provide(TestClock.layer()))

      yield* sweepAt(Date.now())
      assert.strictEqual(yield* stored, 1, "a budget in use is kept")
      // One request's unit is back 6 s later: the budget is whole, and its row goes.
      yield* sweepAt(Date.now() + 6_001)
      assert.strictEqual(yield* stored, 0)
      // Gone is whole: the next request has the whole budget again.
      const next = yield* on(a, get(agent.secret, "/api/agent/auth/status"))
      assert.strictEqual(next.headers.get("ratelimit-remaining"), String(REQUESTS - 1))
    }))
})
