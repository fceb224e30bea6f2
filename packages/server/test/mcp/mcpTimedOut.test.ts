/**
 * The MCP `ask` tool with `defaultOnTimeout`: the call parked on a prompt
 * nobody answers returns, at the prompt's expiry, the default answer marked
 * `timedOut: true`, and its message tells the agent that no person decided —
 * in the text and the structured content alike. A default that does not fit
 * the kind is the route's 400 body as an error result.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { Credentials } from "../../src/auth/Credentials.ts"
import { MCP_SCOPES } from "../../src/oauth/McpScopes.ts"
import { eventually } from "../../../../test/support/eventually.ts"
import { moveDeadline } from "../../../../test/support/prompts.ts"
import { makeAgent, registerDevice, TestServerLayer } from "../../../../test/support/server.ts"
import { callTool, connect } from "./mcpSupport.ts"

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("MCP: ask with defaultOnTimeout", (it) => {
  it.effect("an unanswered ask resolves with its default at expiry: timedOut, and the message says nobody decided", () =>
    Effect.gen(function*() {
      const credentials = yield* Credentials
      const agent = yield* makeAgent(MCP_SCOPES)
      yield* registerDevice(agent, "mcp-timeout-")
      const connected = yield* connect(agent.secret)

      const asking = yield* Effect.forkChild(callTool(connected, "ask", {
        kind: "approval",
        title: "Drop the cache?",
        prompt: "Redis flushall on staging.",
        defaultOnTimeout: "denied",
        remind: null
      }))
      yield* eventually(Effect.sync(() => credentials.holding(agent.token.id)), (n) => n === 1)
      const [pending] = (yield* agent.app.interactions.list()).items
      assert.deepStrictEqual([pending!.defaultOnTimeout, pending!.remind], ["denied", null])
      yield* moveDeadline(pending!.id, Date.now())

      const answer = yield* Fiber.join(asking)
      assert.isFalse(answer.isError)
      assert.deepStrictEqual([answer.json.interaction.status, answer.json.interaction.timedOut], ["denied", true])
      assert.include(answer.json.message, "Nobody answered before the prompt expired")
      assert.include(answer.json.message, "default answer: denied (timedOut)")
      const structured = answer.structured as { interaction: { timedOut: boolean }; message: string }
      assert.deepStrictEqual([structured.interaction.timedOut, structured.message], [true, answer.json.message])
    }))

  it.effect("a default that does not fit the kind: an error result with the route's ANSWER_DOES_NOT_FIT_KIND body", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(MCP_SCOPES)
      const connected = yield* connect(agent.secret)
      const refused = yield* callTool(connected, "ask", { kind: "yes_no", title: "Ship?", prompt: "Ship?", defaultOnTimeout: "approved" })
      assert.isTrue(refused.isError)
      assert.deepStrictEqual(refused.json, {
        code: "ANSWER_DOES_NOT_FIT_KIND",
        error: "defaultOnTimeout of a yes_no prompt is `yes` or `no`."
      })
    }))
})
