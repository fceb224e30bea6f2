/**
 * The mirror table of the MCP tools: every tool of the toolkit mirrors Agent
 * API endpoints that exist, and takes its scopes and its send-counting from
 * them — checked here against the scopes the spec gives those routes, so a
 * change to either side shows; a request body's units (a request per
 * message, a send per sending call).
 */
import { assert, describe, it } from "@effect/vitest"
import { MCP_SCOPES } from "../../src/oauth/McpScopes.ts"
import { bodyUnits, callSends, endpointOf, missingScopes, toolNames, toolRoutes, toolScopes } from "../../src/mcp/ToolRoutes.ts"
import { HeraldTools } from "../../src/mcp/Tools.ts"

const call = (name: string, args: Record<string, unknown> = {}) =>
  JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name, arguments: args } })

describe("MCP tool routes", () => {
  it("every tool of the toolkit has its routes, and every route exists with the method and path it mirrors", () => {
    assert.deepStrictEqual([...toolNames].sort(), Object.keys(HeraldTools.tools).sort())
    const mirrored = Object.fromEntries(toolNames.flatMap((name) =>
      Object.entries(toolRoutes[name]).map(([action, ref]) => {
        const facts = endpointOf(ref)
        return [`${name}${action === "default" ? "" : `.${action}`}`, `${facts.method} ${facts.path}`]
      })
    ))
    assert.deepStrictEqual(mirrored, {
      notify: "POST /api/agent/notifications",
      ask: "POST /api/agent/interactions",
      wait: "GET /api/agent/interactions/:id/wait",
      cancel: "POST /api/agent/interactions/:id/cancel",
      "progress.start": "POST /api/agent/activities",
      "progress.update": "PATCH /api/agent/activities/:identifier",
      "progress.end": "POST /api/agent/activities/:identifier/end",
      page: "POST /api/agent/oncall/:groupId/pages",
      inbox: "GET /api/agent/inbox/notifications"
    })
  })

  it("each tool needs the scopes of the routes it mirrors, and MCP_SCOPES cover them all", () => {
    assert.deepStrictEqual(Object.fromEntries(toolScopes), {
      notify: ["notifications:send"],
      ask: ["interactions:create"],
      wait: ["interactions:read"],
      cancel: ["interactions:create"],
      progress: ["activities:write"],
      page: ["oncall:write"],
      inbox: ["inbox:read"]
    })
    for (const name of toolNames) assert.deepStrictEqual(missingScopes(name, MCP_SCOPES), [], name)
    assert.deepStrictEqual(missingScopes("ask", ["interactions:read"]), ["interactions:create"])
  })

  it("a call of a sending tool counts as a send, as its route does", () => {
    const sends = (text: string) => bodyUnits(text).sends
    for (const name of ["notify", "ask", "page"]) {
      assert.strictEqual(sends(call(name)), 1, name)
      assert.isTrue(callSends(name, {}), name)
    }
    for (const name of ["wait", "cancel", "inbox", "unknown"]) {
      assert.strictEqual(sends(call(name)), 0, name)
      assert.isFalse(callSends(name, {}), name)
    }
    assert.strictEqual(sends(call("progress", { action: "start" })), 1)
    assert.strictEqual(sends(call("progress", { action: "update" })), 1)
    assert.strictEqual(sends(call("progress", { action: "end" })), 0)
    assert.strictEqual(sends(call("progress", { action: "toString" })), 0)
    assert.isTrue(callSends("progress", { action: "update" }))
    assert.isFalse(callSends("progress", { action: "end" }))
    assert.isFalse(callSends("progress", undefined))
    assert.strictEqual(sends(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" })), 0)
  })

  it("each message of a body counts as a request, each sending call as a send", () => {
    assert.deepStrictEqual(bodyUnits(call("notify")), { batch: false, messages: 1, sends: 1 })
    assert.deepStrictEqual(bodyUnits(`[${call("inbox")},${call("notify")}]`), { batch: true, messages: 2, sends: 1 })
    const many = `[${Array.from({ length: 300 }, () => call("notify")).join(",")}]`
    assert.deepStrictEqual(bodyUnits(many), { batch: true, messages: 300, sends: 300 })
    assert.deepStrictEqual(bodyUnits(`[${call("progress", { action: "update" })},${call("progress", { action: "end" })}]`), {
      batch: true,
      messages: 2,
      sends: 1
    })
    // What the runtime refuses still costs a request: not JSON, empty, an empty batch.
    assert.deepStrictEqual(bodyUnits("not json"), { batch: false, messages: 1, sends: 0 })
    assert.deepStrictEqual(bodyUnits(""), { batch: false, messages: 1, sends: 0 })
    assert.deepStrictEqual(bodyUnits("[]"), { batch: true, messages: 1, sends: 0 })
  })
})
