/**
 * The MCP endpoint with the official SDK as its client: it connects over
 * Streamable HTTP with an API token as the bearer, negotiates the newest
 * protocol the SDK offers with a session, is told what Herald is for, and is
 * offered exactly the tools the token's scopes allow. A tool the scopes do
 * not allow is not listed, and calling it answers the JSON-RPC error naming
 * the missing scopes.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { MCP_SCOPES } from "../../src/oauth/McpScopes.ts"
import { makeAgent, rawFetch, TestServerLayer } from "../../../../test/support/server.ts"
import { callTool, connect, toolNamesOf } from "./mcpSupport.ts"

const ALL_TOOLS = ["ask", "cancel", "inbox", "notify", "page", "progress", "wait"]

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("MCP: connect and tools", (it) => {
  it.effect("connects with a session on 2025-11-25 and lists all seven tools for the MCP scopes", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(MCP_SCOPES)
      const connected = yield* connect(agent.secret)
      assert.match(connected.transport.sessionId ?? "", /^[0-9a-f-]{36}$/)
      assert.strictEqual(connected.transport.protocolVersion, "2025-11-25")
      const server = connected.client.getServerVersion()
      assert.strictEqual(server?.name, "herald")
      assert.strictEqual(server?.version, "1.0.0")
      assert.include(connected.client.getInstructions() ?? "", "`ask` before anything irreversible")
      assert.deepStrictEqual(yield* toolNamesOf(connected), ALL_TOOLS)

      const { tools } = yield* Effect.promise(() => connected.client.listTools())
      for (const tool of tools) {
        assert.isAbove(tool.description?.length ?? 0, 80, `${tool.name} says when to use it`)
        assert.strictEqual(tool.inputSchema.type, "object", tool.name)
        assert.strictEqual(tool.outputSchema?.type, "object", tool.name)
      }
      const ask = tools.find((t) => t.name === "ask")!
      // The route's own bounds: the same schemas as POST /interactions.
      const props = ask.inputSchema.properties as Record<string, { maxLength?: number; enum?: ReadonlyArray<string> }>
      assert.strictEqual(props.title?.maxLength, 200)
      assert.strictEqual(props.prompt?.maxLength, 4000)
      assert.deepStrictEqual(ask.inputSchema.required, ["kind", "title", "prompt"])
    }))

  it.effect("older clients get the revision they ask for: 2025-06-18 and 2025-03-26, each with a session", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(MCP_SCOPES)
      for (const version of ["2025-06-18", "2025-03-26"]) {
        const res = yield* rawFetch("/api/agent/mcp", {
          method: "POST",
          headers: { authorization: `Bearer ${agent.secret}`, "content-type": "application/json", accept: "application/json, text/event-stream" },
          body: JSON.stringify({
            jsonrpc: "2.0",
            id: 1,
            method: "initialize",
            params: { protocolVersion: version, capabilities: {}, clientInfo: { name: "old", version: "1" } }
          })
        })
        assert.strictEqual(res.status, 200, version)
        assert.isString(res.headers.get("mcp-session-id"))
        const body = res.body as { result: { protocolVersion: string; serverInfo: { name: string } } }
        assert.strictEqual(body.result.protocolVersion, version)
        assert.strictEqual(body.result.serverInfo.name, "herald")
      }
    }))

  it.effect("a token with fewer scopes is offered fewer tools; calling another answers -32003 with the scopes", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["notifications:send", "interactions:read"])
      const connected = yield* connect(agent.secret)
      assert.deepStrictEqual(yield* toolNamesOf(connected), ["notify", "wait"])

      const refused = yield* Effect.flip(callTool(connected, "ask", { kind: "approval", title: "Deploy?", prompt: "Deploy now?" }))
      assert.strictEqual(refused.code, -32003)
      assert.include(refused.message, "The token lacks scopes: interactions:create.")
      assert.deepStrictEqual(refused.data, {
        code: "MISSING_SCOPE",
        error: "The token lacks scopes: interactions:create.",
        required: ["interactions:create"]
      })
      const progress = yield* Effect.flip(callTool(connected, "progress", { action: "end", key: "build" }))
      assert.deepStrictEqual(progress.data, {
        code: "MISSING_SCOPE",
        error: "The token lacks scopes: activities:write.",
        required: ["activities:write"]
      })
      // A name that is no tool at all is still "not found" (-32602), not a scope error.
      const unknown = yield* Effect.flip(callTool(connected, "nope"))
      assert.strictEqual(unknown.code, -32602)
      assert.include(unknown.message, "Tool 'nope' not found")
    }))

  it.effect("a token with none of the tools' scopes connects and is offered nothing", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["billing:read"])
      const connected = yield* connect(agent.secret)
      assert.deepStrictEqual(yield* toolNamesOf(connected), [])
    }))
})
