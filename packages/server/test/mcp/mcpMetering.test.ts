/**
 * Every MCP message metered (issue 30): a session on protocol 2025-03-26 may
 * send JSON-RPC batches. A batch longer than the cap is refused whole (400,
 * `-32600`); each message counts as a request and each call of a sending tool
 * (`notify`, `ask`, `page`, `progress` start/update) as a send, taken all or
 * none — a batch that does not fit answers 429 and runs nothing; a single
 * call counts exactly once; and a tool call that reaches a tool without the
 * HTTP gate (an in-memory transport) is metered where the tool runs.
 */
import { assert, layer } from "@effect/vitest"
import { CurrentAgent } from "@herald/api"
import { Effect, Layer } from "effect"
import { McpProtocol, McpServer, McpTest } from "effect/ai"
import { SqlClient } from "effect/sql"
import { MAX_BATCH_MESSAGES } from "../../src/mcp/McpMeter.ts"
import { McpRegistrations } from "../../src/mcp/McpRoutes.ts"
import { MCP_SCOPES } from "../../src/oauth/McpScopes.ts"
import { makeAgent, personClient, rawFetch, registerDevice, testServerLayer } from "../../../../test/support/server.ts"
import { seedRoles } from "../../../../test/support/teams.ts"
import { phone } from "../http/activitySupport.ts"
import { seedGroup } from "../oncall/pagesSupport.ts"
import { MCP_URL_PATH } from "./mcpSupport.ts"

const post = (secret: string, body: unknown, sessionId?: string) =>
  rawFetch(MCP_URL_PATH, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      authorization: `Bearer ${secret}`,
      ...(sessionId === undefined ? {} : { "mcp-session-id": sessionId })
    },
    body: JSON.stringify(body)
  })

/** A session on protocol 2025-03-26, the one revision that allows batches (initialize and its notification: two requests). */
const openSession = (secret: string) =>
  Effect.gen(function*() {
    const init = yield* post(secret, {
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-03-26", capabilities: {}, clientInfo: { name: "batcher", version: "1" } }
    })
    assert.strictEqual(init.status, 200)
    const sessionId = init.headers.get("mcp-session-id")
    assert.isNotNull(sessionId)
    const initialized = yield* post(secret, { jsonrpc: "2.0", method: "notifications/initialized" }, sessionId!)
    assert.strictEqual(initialized.status, 202)
    return sessionId!
  })

let nextId = 1
/** `tools/call` messages of one tool, arguments by index. */
const calls = (name: string, n: number, args: (i: number) => Record<string, unknown>) =>
  Array.from({ length: n }, (_, i) => ({ jsonrpc: "2.0", id: nextId++, method: "tools/call", params: { name, arguments: args(i) } }))

/** The JSON-RPC answers of a request (JSON, or an SSE stream of them). */
const answersOf = (body: unknown): Array<any> =>
  typeof body === "string"
    ? body.split("\n").filter((line) => line.startsWith("data: ")).map((line) => JSON.parse(line.slice(6)))
    : Array.isArray(body)
    ? body
    : [body]

/** The tool results of answers: each `isError` flag and its text as JSON. */
const resultsOf = (body: unknown) =>
  answersOf(body).map((a) => ({ isError: a.result?.isError === true, json: JSON.parse(a.result.content[0].text) }))

const count = (query: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<{ n: number }>, unknown>) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => Effect.map(Effect.orDie(query(sql)), (rows) => rows[0]!.n))

const notificationsOf = (userId: string) =>
  count((sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM notifications WHERE user_id = ${userId}`)

const rateLimited = (res: { status: number; headers: Headers; body: unknown }, limit: string) => {
  assert.strictEqual(res.status, 429)
  assert.strictEqual((res.body as { code: string }).code, "RATE_LIMITED")
  assert.strictEqual(res.headers.get("ratelimit-limit"), limit)
  assert.strictEqual(res.headers.get("ratelimit-remaining"), "0")
  assert.isNotNull(res.headers.get("retry-after"))
  return (res.body as { error: string }).error
}

const notify = (i: number) => ({ title: `Alert ${i}`, body: "batched" })

const options = { excludeTestServices: true, timeout: "60 seconds" } as const

layer(testServerLayer({ HERALD_SEND_LIMIT_PER_MINUTE: "5" }), options)("MCP: every message metered", (it) => {
  it.effect("a batch of 300 notify calls is refused whole by the batch cap: 400 -32600, nothing pushed", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(MCP_SCOPES)
      yield* registerDevice(agent, "mcp-batch-")
      const sessionId = yield* openSession(agent.secret)

      const refused = yield* post(agent.secret, calls("notify", 300, notify), sessionId)
      assert.strictEqual(refused.status, 400)
      const error = (refused.body as { error: { code: number; data: { code: string; limit: number } } }).error
      assert.strictEqual(error.code, -32600)
      assert.deepStrictEqual([error.data.code, error.data.limit], ["BATCH_TOO_LARGE", MAX_BATCH_MESSAGES])
      assert.strictEqual(yield* notificationsOf(agent.person.id), 0)

      // The cap is on messages, sending or not; a batch at the cap is served.
      const tooLong = yield* post(agent.secret, calls("inbox", MAX_BATCH_MESSAGES + 1, () => ({})), sessionId)
      assert.strictEqual(tooLong.status, 400)
      const atCap = yield* post(agent.secret, calls("inbox", MAX_BATCH_MESSAGES, () => ({})), sessionId)
      assert.strictEqual(atCap.status, 200)
      assert.strictEqual(resultsOf(atCap.body).length, MAX_BATCH_MESSAGES)
    }))

  it.effect("notify: a batch over the send budget answers 429 and runs none of it; one within it sends all and takes them all", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(MCP_SCOPES)
      yield* registerDevice(agent, "mcp-batch-")
      const sessionId = yield* openSession(agent.secret)

      const ten = yield* post(agent.secret, calls("notify", 10, notify), sessionId)
      assert.match(rateLimited(ten, "5"), /10 sends at once/)
      const six = yield* post(agent.secret, calls("notify", 6, notify), sessionId)
      assert.match(rateLimited(six, "5"), /6 sends at once, more than the 5 sends a minute/)
      assert.strictEqual(yield* notificationsOf(agent.person.id), 0)

      // The refusals took nothing: the whole budget is there for five.
      const five = yield* post(agent.secret, calls("notify", 5, notify), sessionId)
      assert.strictEqual(five.status, 200)
      assert.strictEqual(five.headers.get("ratelimit-remaining"), "0")
      const results = resultsOf(five.body)
      assert.deepStrictEqual(results.map((r) => r.isError), [false, false, false, false, false])
      assert.strictEqual(yield* notificationsOf(agent.person.id), 5)

      // Two more fit once two sends have come back: 24 s at 5 a minute.
      const two = yield* post(agent.secret, calls("notify", 2, notify), sessionId)
      assert.match(rateLimited(two, "5"), /5 sends a minute for this token\. Retry after 24 s\./)
      assert.strictEqual(two.headers.get("retry-after"), "24")
      const sixth = yield* post(agent.secret, calls("notify", 1, notify)[0], sessionId)
      assert.strictEqual(rateLimited(sixth, "5"), "Rate limit exceeded: 5 sends a minute for this token. Retry after 12 s.")
      assert.strictEqual(yield* notificationsOf(agent.person.id), 5)
      // Reading is no send: still served.
      assert.strictEqual((yield* post(agent.secret, calls("inbox", 1, () => ({}))[0], sessionId)).status, 200)
    }))

  it.effect("ask: a batch over the send budget creates no prompt; one within it creates each", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(MCP_SCOPES)
      yield* registerDevice(agent, "mcp-batch-")
      const sessionId = yield* openSession(agent.secret)
      const prompts = count((sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM interactions WHERE user_id = ${agent.person.id}`)
      const ask = (i: number) => ({ kind: "yes_no", title: `Deploy ${i}?`, prompt: "Now?", waitSeconds: 1 })

      rateLimited(yield* post(agent.secret, calls("ask", 6, ask), sessionId), "5")
      assert.strictEqual(yield* prompts, 0)

      const five = yield* post(agent.secret, calls("ask", 5, ask), sessionId)
      assert.strictEqual(five.status, 200)
      assert.strictEqual(five.headers.get("ratelimit-remaining"), "0")
      const results = resultsOf(five.body)
      assert.strictEqual(results.length, 5)
      for (const r of results) assert.match(r.json.interaction.id, /^int_/)
      assert.strictEqual(yield* prompts, 5)
      rateLimited(yield* post(agent.secret, calls("ask", 1, ask)[0], sessionId), "5")
      assert.strictEqual(yield* prompts, 5)
    }))

  it.effect("page: a batch over the send budget pages no one; one within it opens each page", () =>
    Effect.gen(function*() {
      const { member, owner, teamId } = yield* seedRoles()
      const groupId = yield* seedGroup(teamId, [member, owner])
      const app = yield* personClient(owner.session)
      const token = yield* app.tokens.create({ payload: { name: "mcp pager", scopes: [...MCP_SCOPES] } }).pipe(Effect.orDie)
      const sessionId = yield* openSession(token.secret)
      const pages = count((sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM pages WHERE group_id = ${groupId}`)
      const page = (i: number) => ({ groupId, title: `Incident ${i}`, dedupKey: `incident-${i}` })

      rateLimited(yield* post(token.secret, calls("page", 6, page), sessionId), "5")
      assert.strictEqual(yield* pages, 0)

      const five = yield* post(token.secret, calls("page", 5, page), sessionId)
      assert.strictEqual(five.status, 200)
      assert.deepStrictEqual(resultsOf(five.body).map((r) => r.json.deduplicated), [false, false, false, false, false])
      assert.strictEqual(yield* pages, 5)
      rateLimited(yield* post(token.secret, calls("page", 1, (i) => page(i + 10))[0], sessionId), "5")
      assert.strictEqual(yield* pages, 5)
    }))

  it.effect("progress: start and update count as sends in a batch, end does not; a batch over the budget changes nothing", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(MCP_SCOPES)
      yield* phone(agent, "ios")
      const sessionId = yield* openSession(agent.secret)
      const activities = count((sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM live_activities WHERE user_id = ${agent.person.id}`)
      const updated = count((sql) =>
        sql<{ n: number }>`SELECT count(*)::int AS n FROM live_activities WHERE user_id = ${agent.person.id} AND props ->> 'step' IS NOT NULL`
      )
      const start = (i: number) => ({ action: "start", key: `job-${i}`, props: { title: `Job ${i}` } })
      const update = (i: number) => ({ action: "update", key: `job-${i % 2}`, props: { step: i } })

      rateLimited(yield* post(agent.secret, calls("progress", 6, start), sessionId), "5")
      assert.strictEqual(yield* activities, 0)

      const two = yield* post(agent.secret, calls("progress", 2, start), sessionId)
      assert.strictEqual(two.status, 200)
      assert.deepStrictEqual(resultsOf(two.body).map((r) => r.isError), [false, false])
      assert.strictEqual(two.headers.get("ratelimit-remaining"), "3")

      rateLimited(yield* post(agent.secret, calls("progress", 4, update), sessionId), "5")
      assert.strictEqual(yield* updated, 0)

      // Two updates and a notify: the last three sends, in one batch of two tools.
      const mixed = yield* post(agent.secret, [...calls("progress", 2, update), ...calls("notify", 1, notify)], sessionId)
      assert.strictEqual(mixed.status, 200)
      assert.deepStrictEqual(resultsOf(mixed.body).map((r) => r.isError), [false, false, false])
      assert.strictEqual(yield* updated, 2)

      rateLimited(yield* post(agent.secret, calls("progress", 1, update)[0], sessionId), "5")
      // Ending is no send: served with the send budget spent.
      const ends = yield* post(agent.secret, calls("progress", 2, (i) => ({ action: "end", key: `job-${i}` })), sessionId)
      assert.strictEqual(ends.status, 200)
      assert.deepStrictEqual(resultsOf(ends.body).map((r) => r.json.activity.status), ["ended", "ended"])
    }))

  it.effect("a single call counts exactly one send and one request: no double charge", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(MCP_SCOPES)
      const sessionId = yield* openSession(agent.secret)
      for (let i = 0; i < 5; i++) {
        const sent = yield* post(agent.secret, calls("notify", 1, notify)[0], sessionId)
        assert.strictEqual(sent.status, 200)
        assert.strictEqual(sent.headers.get("ratelimit-remaining"), String(4 - i))
        assert.isFalse(resultsOf(sent.body)[0]!.isError)
      }
      rateLimited(yield* post(agent.secret, calls("notify", 1, notify)[0], sessionId), "5")
      assert.strictEqual(yield* notificationsOf(agent.person.id), 5)
    }))

  it.effect("a tool call that reaches the tool without the HTTP gate is metered where the tool runs", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(MCP_SCOPES)
      // Another transport (in memory) serving the same registrations, acting as the agent's token.
      const asAgent = McpServer.middleware<{ provides: CurrentAgent }>()(
        (effect) =>
          Effect.provideService(effect, CurrentAgent, {
            userId: agent.person.id,
            tokenId: agent.token.id,
            tokenName: agent.token.name,
            scopes: MCP_SCOPES,
            tokenPrefix: agent.token.prefix,
            tokenCreatedAt: agent.token.createdAt,
            tokenExpiresAt: agent.token.expiresAt,
            tokenLastUsedAt: null
          }),
        { global: true }
      )
      // Built after the registrations, so it runs outside their meter.
      const registrations = asAgent.pipe(Layer.provideMerge(McpRegistrations))
      const client = yield* (McpTest.makeClient(registrations, { protocols: [McpProtocol.v2025_11_25] }) as Effect.Effect<
        McpTest.Client,
        unknown,
        never
      >)
      for (let i = 0; i < 5; i++) {
        const result = yield* client.callTool({ name: "notify", arguments: notify(i) })
        assert.notStrictEqual(result.isError, true)
      }
      const refused = yield* Effect.flip(client.callTool({ name: "notify", arguments: notify(5) }))
      assert.strictEqual(refused.code, -32004)
      assert.strictEqual((refused.data as { code: string }).code, "RATE_LIMITED")
      assert.strictEqual((refused.data as { retryAfterSeconds: number }).retryAfterSeconds, 12)
      assert.strictEqual(yield* notificationsOf(agent.person.id), 5)
      // Not a send: it costs a request only.
      const inbox = yield* client.callTool({ name: "inbox", arguments: {} })
      assert.notStrictEqual(inbox.isError, true)

      // One budget per token, whatever the transport: the HTTP endpoint refuses the token's next send.
      const sessionId = yield* openSession(agent.secret)
      rateLimited(yield* post(agent.secret, calls("notify", 1, notify)[0], sessionId), "5")
    }).pipe(Effect.scoped))
})

layer(testServerLayer({ HERALD_RATE_LIMIT_PER_MINUTE: "10" }), options)("MCP: requests metered per message", (it) => {
  it.effect("each message of a batch counts as a request, sending or not", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(MCP_SCOPES)
      const sessionId = yield* openSession(agent.secret) // two requests

      const nine = yield* post(agent.secret, calls("inbox", 9, () => ({})), sessionId)
      assert.match(rateLimited(nine, "10"), /10 requests a minute/)
      const eight = yield* post(agent.secret, calls("inbox", 8, () => ({})), sessionId)
      assert.strictEqual(eight.status, 200)
      assert.strictEqual(eight.headers.get("ratelimit-remaining"), "0")
      assert.strictEqual(resultsOf(eight.body).length, 8)
      rateLimited(yield* post(agent.secret, { jsonrpc: "2.0", id: nextId++, method: "tools/list" }, sessionId), "10")
    }))
})
