/**
 * MCP behind a plain round-robin balancer over two nodes on one database
 * (issue 33), the balancer passing each request to the next node in turn:
 *
 * - the stateless revision (`2026-07-28`): either node answers a request with
 *   no session, and Effect's own MCP client discovers the tools and calls `ask`;
 * - the 2025 revisions: the official SDK connects and calls `ask` with its
 *   session's requests answered by both nodes; the session outlives the node
 *   that opened it (stopped, the client carries on through the other);
 * - what bounds a session holds over both nodes: another token's request is
 *   404 on each, a DELETE on one ends it on both (a new client starts a new
 *   session), the per-token cap ends the least recently used wherever it was
 *   opened, and idle expiry swept on one node ends it on the other.
 *
 * The person answers over the Person API of the node the `ask` reached (the
 * wake-up of a waiter on another node is PostgreSQL's NOTIFY, tested with the
 * prompts), so the file runs on either database.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Fiber, Layer } from "effect"
import { McpClient, McpProtocol } from "effect/ai"
import { FetchHttpClient } from "effect/http"
import { TestClock } from "effect/testing"
import { MAX_SESSIONS_PER_TOKEN, McpSessions } from "../../src/mcp/McpSessions.ts"
import { MCP_SCOPES } from "../../src/oauth/McpScopes.ts"
import { eventually } from "../../../../test/support/eventually.ts"
import { makeAgent, personClient, rawFetch, TestServer } from "../../../../test/support/server.ts"
import { balancer, on, SharedDatabase, startNode } from "./mcpNodes.ts"
import type { Balancer, Node } from "./mcpNodes.ts"
import { callTool, connect, MCP_URL_PATH, toolNamesOf } from "./mcpSupport.ts"

const ALL_TOOLS = ["ask", "cancel", "inbox", "notify", "page", "progress", "wait"]

const UNKNOWN_SESSION = {
  code: "NOT_FOUND",
  error: "No such MCP session (it was ended, or this token never opened it): send initialize to start a new one."
}

const question = (title: string) => ({ kind: "approval", title, prompt: "Release 4.2 to all regions now." })

const jsonHeaders = (secret: string) => ({
  authorization: `Bearer ${secret}`,
  "content-type": "application/json",
  accept: "application/json, text/event-stream"
})

/** An `initialize` of 2025-11-25 by hand; answers the session id. */
const initialize = (secret: string) =>
  rawFetch(MCP_URL_PATH, {
    method: "POST",
    headers: jsonHeaders(secret),
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "by-hand", version: "1" } }
    })
  }).pipe(Effect.map((res) => {
    assert.strictEqual(res.status, 200)
    return res.headers.get("mcp-session-id")!
  }))

/** `tools/list` by hand in a session, with a token (not necessarily the session's). */
const listTools = (secret: string, sessionId: string) =>
  rawFetch(MCP_URL_PATH, {
    method: "POST",
    headers: { ...jsonHeaders(secret), "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/list" })
  })

/** `tools/list` of the stateless revision: the revision and the client's capabilities travel with the request. */
const statelessListTools = (secret: string) =>
  rawFetch(MCP_URL_PATH, {
    method: "POST",
    headers: { ...jsonHeaders(secret), "mcp-protocol-version": "2026-07-28", "mcp-method": "tools/list" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/list",
      params: {
        _meta: { "io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {} }
      }
    })
  })

/** The status of a `tools/list` in the session on `node` (200 while it lives, 404 once ended). */
const statusOn = (node: Node, secret: string, sessionId: string) =>
  on(node, Effect.map(listTools(secret, sessionId), (res) => res.status))

/** The official SDK client of a token, connected through the balancer. */
const connectThrough = (lb: Balancer, secret: string) => Effect.provideService(connect(secret), TestServer, { baseUrl: lb.url })

/** The node the balancer passed the latest call of `tool` to, once it has. */
const nodeOfCall = (lb: Balancer, tool: string) =>
  eventually(Effect.sync(() => lb.passed.findLast((p) => p.rpc === "tools/call" && p.tool === tool)), (p) => p !== undefined)
    .pipe(Effect.map((p) => p!.node))

type Agent = Effect.Success<ReturnType<typeof makeAgent>>

/** The person approves the agent's pending prompt `title` on their phone, through the Person API of `node`. */
const approveOn = (node: Node, agent: Agent, title: string) =>
  on(node, Effect.gen(function*() {
    const app = yield* personClient(agent.session)
    const listed = yield* eventually(
      app.interactions.list(),
      (page) => page.items.some((p) => p.title === title && p.status === "pending")
    )
    const prompt = listed.items.find((p) => p.title === title)!
    yield* app.interactions.answer({ params: { id: prompt.id }, payload: { status: "approved" } })
  }))

const twoNodes = Effect.all([startNode, startNode])

layer(SharedDatabase.layer, { excludeTestServices: true, timeout: "120 seconds" })("MCP across nodes", (it) => {
  it.effect("the stateless revision: either node answers with no session, and Effect's client calls ask through the balancer", () =>
    Effect.gen(function*() {
      const nodes = yield* twoNodes
      const agent = yield* on(nodes[0], makeAgent(MCP_SCOPES))
      for (const node of nodes) {
        const res = yield* on(node, statelessListTools(agent.secret))
        assert.strictEqual(res.status, 200, node.baseUrl)
        assert.isNull(res.headers.get("mcp-session-id"))
        const tools = (res.body as { result: { tools: ReadonlyArray<{ name: string }> } }).result.tools
        assert.deepStrictEqual(tools.map((t) => t.name).sort(), ALL_TOOLS)
      }

      const lb = yield* balancer(nodes)
      const asked = yield* Effect.gen(function*() {
        const client = yield* McpClient.McpClient
        assert.strictEqual(client.protocolVersion, "2026-07-28")
        const ask = (yield* client.listTools()).find((t) => t.name === "ask")!
        const asking = yield* Effect.forkChild(client.callTool({ tool: ask, arguments: question("Stateless?") }))
        yield* approveOn(nodes[yield* nodeOfCall(lb, "ask")]!, agent, "Stateless?")
        return yield* Fiber.join(asking)
      }).pipe(Effect.provide(McpClient.layerHttp({
        name: "stateless-client",
        version: "1.0.0",
        url: `${lb.url}${MCP_URL_PATH}`,
        protocol: McpProtocol.v2026_07_28,
        headers: { authorization: `Bearer ${agent.secret}` }
      }).pipe(Layer.provide(FetchHttpClient.layer))))

      assert.isFalse(asked.isError === true)
      const created = asked.structuredContent as { interaction: { title: string; status: string } }
      assert.deepStrictEqual([created.interaction.title, created.interaction.status], ["Stateless?", "approved"])
      // Every request went without a session, and both nodes answered some.
      assert.isAtLeast(lb.passed.length, 3)
      for (const passed of lb.passed) {
        assert.isUndefined(passed.session)
        assert.strictEqual(passed.status, 200, passed.rpc)
      }
      assert.deepStrictEqual(new Set(lb.passed.map((p) => p.node)), new Set([0, 1]))
    }))

  it.effect("the official SDK connects through the balancer and calls ask; the session's requests are answered by both nodes", () =>
    Effect.gen(function*() {
      const nodes = yield* twoNodes
      const lb = yield* balancer(nodes)
      const agent = yield* on(nodes[0], makeAgent(MCP_SCOPES))
      const connected = yield* connectThrough(lb, agent.secret)
      const sessionId = connected.transport.sessionId!
      assert.strictEqual(connected.transport.protocolVersion, "2025-11-25")
      assert.deepStrictEqual(yield* toolNamesOf(connected), ALL_TOOLS)

      const asking = yield* Effect.forkChild(callTool(connected, "ask", question("Through the balancer?")))
      yield* approveOn(nodes[yield* nodeOfCall(lb, "ask")]!, agent, "Through the balancer?")
      const answer = yield* Fiber.join(asking)
      assert.isFalse(answer.isError)
      assert.strictEqual(answer.json.interaction.status, "approved")

      // One session, its POSTs answered (2xx) by the node that opened it and by the other.
      const opener = lb.passed.find((p) => p.rpc === "initialize")!.node
      const inSession = lb.passed.filter((p) => p.session === sessionId && p.method === "POST")
      assert.isTrue(inSession.some((p) => p.node !== opener), "a request of the session reached the other node")
      assert.deepStrictEqual(new Set(inSession.map((p) => p.node)), new Set([0, 1]))
      for (const passed of inSession) assert.isBelow(passed.status!, 300, passed.rpc)
      assert.strictEqual(connected.transport.sessionId, sessionId)
    }))

  it.effect("a session outlives the node that opened it: stopped, the client carries on through the other", () =>
    Effect.gen(function*() {
      const nodes = yield* twoNodes
      const lb = yield* balancer(nodes)
      const connectedAgent = yield* on(nodes[0], makeAgent(MCP_SCOPES))
      const connected = yield* connectThrough(lb, connectedAgent.secret)
      const sessionId = connected.transport.sessionId!
      const opener = lb.passed.find((p) => p.rpc === "initialize")!.node
      const survivor = nodes[1 - opener]!

      yield* nodes[opener]!.stop
      const before = lb.passed.length
      assert.deepStrictEqual(yield* toolNamesOf(connected), ALL_TOOLS)
      const asking = yield* Effect.forkChild(callTool(connected, "ask", question("After the restart?")))
      yield* approveOn(survivor, connectedAgent, "After the restart?")
      const answer = yield* Fiber.join(asking)
      assert.strictEqual(answer.json.interaction.status, "approved")

      // The same session, every request of it now answered by the node still up.
      assert.strictEqual(connected.transport.sessionId, sessionId)
      const after = lb.passed.slice(before)
      assert.isAtLeast(after.length, 2)
      for (const passed of after) {
        assert.strictEqual(passed.node, 1 - opener)
        assert.strictEqual(passed.session, sessionId)
        assert.strictEqual(passed.status, 200, passed.rpc)
      }
    }))

  it.effect("another token is refused on both nodes; a DELETE on one ends the session on both, and a new client starts another", () =>
    Effect.gen(function*() {
      const nodes = yield* twoNodes
      const lb = yield* balancer(nodes)
      const agent = yield* on(nodes[0], makeAgent(MCP_SCOPES))
      const other = yield* on(nodes[0], makeAgent(MCP_SCOPES))
      const connected = yield* connectThrough(lb, agent.secret)
      const sessionId = connected.transport.sessionId!

      for (const node of nodes) {
        const foreign = yield* on(node, listTools(other.secret, sessionId))
        assert.deepStrictEqual([foreign.status, foreign.body], [404, UNKNOWN_SESSION])
        assert.strictEqual(yield* statusOn(node, agent.secret, sessionId), 200)
      }

      yield* Effect.promise(() => connected.transport.terminateSession())
      assert.strictEqual(lb.passed.findLast((p) => p.method === "DELETE")!.status, 204)
      for (const node of nodes) {
        const gone = yield* on(node, listTools(agent.secret, sessionId))
        assert.deepStrictEqual([gone.status, gone.body], [404, UNKNOWN_SESSION])
      }

      const again = yield* connectThrough(lb, agent.secret)
      assert.notStrictEqual(again.transport.sessionId, sessionId)
      assert.deepStrictEqual(yield* toolNamesOf(again), ALL_TOOLS)
    }))

  it.effect("the per-token cap counts the sessions of both nodes: the 17th ends the least recently used, on both", () =>
    Effect.gen(function*() {
      const [a, b] = yield* twoNodes
      const agent = yield* on(a, makeAgent(MCP_SCOPES))
      const opened: Array<string> = []
      for (let i = 0; i < MAX_SESSIONS_PER_TOKEN; i++) opened.push(yield* on(i % 2 === 0 ? a : b, initialize(agent.secret)))
      // The first (opened on a) is used on b: the second is now the least recently used.
      assert.strictEqual(yield* statusOn(b, agent.secret, opened[0]!), 200)

      const newest = yield* on(b, initialize(agent.secret))
      for (const node of [a, b]) {
        const evicted = yield* on(node, listTools(agent.secret, opened[1]!))
        assert.deepStrictEqual([evicted.status, evicted.body], [404, UNKNOWN_SESSION])
      }
      for (const id of [opened[0]!, ...opened.slice(2), newest]) assert.strictEqual(yield* statusOn(a, agent.secret, id), 200, id)
    }))

  it.effect("idle expiry swept on one node ends a session opened on the other; one used since survives on both", () =>
    Effect.gen(function*() {
      const [a, b] = yield* twoNodes
      const agent = yield* on(a, makeAgent(MCP_SCOPES))
      const idle = yield* on(a, initialize(agent.secret))
      const used = yield* on(a, initialize(agent.secret))
      assert.strictEqual(yield* on(a, Effect.map(Effect.service(McpSessions), (s) => s.count(agent.token.id))), 2)

      // 31 minutes on: `used` is used on b then, `idle` nowhere; b's sweep runs.
      const swept = yield* Effect.gen(function*() {
        yield* TestClock.setTime(Date.now() + 31 * 60_000)
        const sessions = yield* on(b, Effect.service(McpSessions))
        yield* sessions.touch(used)
        return yield* sessions.sweep
      }).pipe(Effect.provide(TestClock.layer()))
      assert.isAtLeast(swept.idle, 1)

      // a still held `idle` in its runtime: its next request finds it ended and a lets it go.
      for (const node of [a, b]) {
        const gone = yield* on(node, listTools(agent.secret, idle))
        assert.deepStrictEqual([gone.status, gone.body], [404, UNKNOWN_SESSION])
        assert.strictEqual(yield* statusOn(node, agent.secret, used), 200)
      }
      assert.strictEqual(yield* on(a, Effect.map(Effect.service(McpSessions), (s) => s.count(agent.token.id))), 1)
    }))
})
