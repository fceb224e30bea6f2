/**
 * The MCP endpoint of a real `herald serve` process (the layer graph the
 * command composes, not the in-process test server's): the official SDK
 * connects with an API token, is offered the tools of its scopes, and an
 * `ask` the person answers on the phone (through the Person API) returns the
 * answer.
 */
import { assert, layer } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Effect, Fiber } from "effect"
import { answerOnPhone, Gate, GateLayer } from "../../../../test/support/gate.ts"

layer(GateLayer, { timeout: "120 seconds", excludeTestServices: true })("MCP on herald serve", (it) => {
  it.effect("the SDK connects, lists the token's tools, and an ask returns the person's answer", () =>
    Effect.gen(function*() {
      const { baseUrl, env } = yield* Gate
      const client = new Client({ name: "serve-test", version: "1.0.0" })
      const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl}/api/agent/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${env.HERALD_TOKEN}` } }
      })
      yield* Effect.acquireRelease(Effect.promise(() => client.connect(transport)), () => Effect.promise(() => client.close()))
      const { tools } = yield* Effect.promise(() => client.listTools())
      // The token holds interactions:create and interactions:read.
      assert.deepStrictEqual(tools.map((t) => t.name).sort(), ["ask", "cancel", "wait"])

      const asking = yield* Effect.forkChild(Effect.promise(() =>
        client.callTool({ name: "ask", arguments: { kind: "approval", title: "MCP over serve?", prompt: "Approve from the phone." } })
      ))
      yield* answerOnPhone("MCP over serve?", "approved")
      const result = yield* Fiber.join(asking)
      assert.isFalse(result.isError === true)
      const created = result.structuredContent as { interaction: { status: string; title: string } }
      assert.deepStrictEqual([created.interaction.title, created.interaction.status], ["MCP over serve?", "approved"])
    }))
})
