/**
 * `ask`, `wait` and `cancel` with the official SDK against real prompts: the
 * person answers through the Person API while the `ask` call is parked on
 * the prompt (observed through the credential's waiters, no sleep); a wait
 * that runs out returns the pending prompt with its id and the line telling
 * the agent to call `wait`; `wait` and `cancel` answer the very record the
 * Agent API routes answer; capability errors are tool results with
 * `isError: true` and the route's `{code, error}` body.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { Credentials } from "../../src/auth/Credentials.ts"
import { MCP_SCOPES } from "../../src/oauth/McpScopes.ts"
import { eventually } from "../../../../test/support/eventually.ts"
import { makeAgent, rawFetch, registerDevice, TestServerLayer } from "../../../../test/support/server.ts"
import { callTool, connect } from "./mcpSupport.ts"

const question = { kind: "approval", title: "Deploy to production?", prompt: "Release 4.2 to all regions now." }

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("MCP: ask, wait, cancel", (it) => {
  it.effect("ask waits while the person answers on the phone, and returns the answered prompt", () =>
    Effect.gen(function*() {
      const credentials = yield* Credentials
      const agent = yield* makeAgent(MCP_SCOPES)
      yield* registerDevice(agent, "mcp-ask-")
      const connected = yield* connect(agent.secret)

      const asking = yield* Effect.forkChild(callTool(connected, "ask", question))
      // The call is parked on the prompt (its long-poll races the token's end): the person answers now.
      yield* eventually(Effect.sync(() => credentials.holding(agent.token.id)), (n) => n === 1)
      const pending = yield* agent.app.interactions.list()
      assert.lengthOf(pending.items, 1)
      const id = pending.items[0]!.id
      yield* agent.app.interactions.answer({ params: { id }, payload: { status: "approved" } })

      const answer = yield* Fiber.join(asking)
      assert.isFalse(answer.isError)
      assert.strictEqual(answer.json.interaction.id, id)
      assert.strictEqual(answer.json.interaction.status, "approved")
      assert.strictEqual(answer.json.interaction.respondingUserId, agent.person.id)
      assert.strictEqual(answer.json.accepted, 1)
      assert.strictEqual(answer.json.message, "The person answered: approved.")
      assert.deepStrictEqual(answer.structured, answer.json)
      // The prompt as the Agent API reads it: the same record.
      const read = yield* rawFetch(`/api/agent/interactions/${id}`, { headers: { authorization: `Bearer ${agent.secret}` } })
      assert.deepStrictEqual(answer.json.interaction, read.body)
      assert.strictEqual(credentials.holding(agent.token.id), 0, "no waiter left behind")
    }))

  it.effect("a reply prompt returns the person's text", () =>
    Effect.gen(function*() {
      const credentials = yield* Credentials
      const agent = yield* makeAgent(MCP_SCOPES)
      const connected = yield* connect(agent.secret)
      const asking = yield* Effect.forkChild(callTool(connected, "ask", {
        kind: "reply",
        title: "Which branch?",
        prompt: "Which branch should I release from?",
        choices: ["main", "release/4.2"]
      }))
      yield* eventually(Effect.sync(() => credentials.holding(agent.token.id)), (n) => n === 1)
      const [prompt] = (yield* agent.app.interactions.list()).items
      yield* agent.app.interactions.answer({ params: { id: prompt!.id }, payload: { status: "replied", response: "release/4.2" } })
      const answer = yield* Fiber.join(asking)
      assert.strictEqual(answer.json.interaction.status, "replied")
      assert.strictEqual(answer.json.interaction.response, "release/4.2")
      assert.deepStrictEqual(answer.json.interaction.choices, ["main", "release/4.2"])
      assert.strictEqual(answer.json.message, "The person replied: release/4.2")
    }))

  it.effect("an ask whose wait runs out returns the pending prompt; wait and cancel take it from there", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(MCP_SCOPES)
      const connected = yield* connect(agent.secret)
      const asked = yield* callTool(connected, "ask", { ...question, waitSeconds: 1 })
      assert.isFalse(asked.isError)
      const id: string = asked.json.interaction.id
      assert.match(id, /^int_/)
      assert.strictEqual(asked.json.interaction.status, "pending")
      assert.strictEqual(
        asked.json.message,
        `No answer after 1 s; the prompt is still pending. Call \`wait\` with id "${id}" to keep waiting (do not ask again), ` +
          "or `cancel` it if it no longer matters."
      )

      const waited = yield* callTool(connected, "wait", { id, waitSeconds: 1 })
      assert.isFalse(waited.isError)
      assert.strictEqual(waited.json.status, "pending")

      const canceled = yield* callTool(connected, "cancel", { id })
      assert.isFalse(canceled.isError)
      assert.strictEqual(canceled.json.status, "canceled")
      const read = yield* rawFetch(`/api/agent/interactions/${id}`, { headers: { authorization: `Bearer ${agent.secret}` } })
      assert.deepStrictEqual(canceled.json, read.body)

      // A wait on an ended prompt answers at once.
      const after = yield* callTool(connected, "wait", { id })
      assert.deepStrictEqual(after.json, read.body)

      // The route's 409 body, as a tool error the model reads.
      const again = yield* callTool(connected, "cancel", { id })
      assert.isTrue(again.isError)
      assert.deepStrictEqual(again.json, yield* conflictBody(agent.secret, id))
      assert.strictEqual(again.json.code, "CONFLICT")
      assert.isUndefined(again.structured)
    }))

  it.effect("another token's prompt, or an unknown one, is NOT_FOUND as the route answers it", () =>
    Effect.gen(function*() {
      const owner = yield* makeAgent(MCP_SCOPES)
      const other = yield* makeAgent(MCP_SCOPES)
      const ownerMcp = yield* connect(owner.secret)
      const otherMcp = yield* connect(other.secret)
      const asked = yield* callTool(ownerMcp, "ask", { ...question, waitSeconds: 1 })
      const id: string = asked.json.interaction.id

      const theirs = yield* callTool(otherMcp, "wait", { id, waitSeconds: 1 })
      const unknown = yield* callTool(otherMcp, "cancel", { id: "int_doesnotexist" })
      const route = yield* rawFetch(`/api/agent/interactions/${id}/wait?timeout=1`, { headers: { authorization: `Bearer ${other.secret}` } })
      assert.strictEqual(route.status, 404)
      for (const answer of [theirs, unknown]) {
        assert.isTrue(answer.isError)
        assert.deepStrictEqual(answer.json, route.body)
      }
      assert.deepStrictEqual(route.body, { error: "Prompt not found.", code: "NOT_FOUND" })
    }))

  it.effect("arguments outside the route's bounds are a tool error naming the field, and no prompt is made", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(MCP_SCOPES)
      const connected = yield* connect(agent.secret)
      const tooLong = yield* callTool(connected, "ask", { ...question, title: "x".repeat(201) })
      assert.isTrue(tooLong.isError)
      assert.include(tooLong.text, "Invalid parameters for tool 'ask'")
      assert.include(tooLong.text, "at most 200")
      assert.include(tooLong.text, `["title"]`)
      const badWait = yield* callTool(connected, "wait", { id: "int_x", waitSeconds: 56 })
      assert.isTrue(badWait.isError)
      assert.include(badWait.text, `["waitSeconds"]`)
      const badKind = yield* callTool(connected, "ask", { ...question, kind: "maybe" })
      assert.isTrue(badKind.isError)
      assert.include(badKind.text, `["kind"]`)
      assert.lengthOf((yield* agent.app.interactions.list()).items, 0)
    }))
})

/** What POST /interactions/{id}/cancel answers for a prompt that already left `pending`. */
const conflictBody = (secret: string, id: string) =>
  Effect.map(
    rawFetch(`/api/agent/interactions/${id}/cancel`, { method: "POST", headers: { authorization: `Bearer ${secret}` } }),
    (r) => r.body
  )
