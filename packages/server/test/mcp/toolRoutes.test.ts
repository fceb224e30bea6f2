/**
 * The mirror table of the MCP tools: every tool of the toolkit mirrors Agent
 * API endpoints that exist, and takes its scopes and its send-counting from
 * them — checked here against the scopes the spec gives those routes, so a
 * change to either side shows.
 */
import { assert, describe, it } from "@effect/vitest"
import { MCP_SCOPES } from "../../src/oauth/McpScopes.ts"
import { bodySends, endpointOf, missingScopes, toolNames, toolRoutes, toolScopes } from "../../src/mcp/ToolRoutes.ts"
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
    for (const name of ["notify", "ask", "page"]) assert.isTrue(bodySends(call(name)), name)
    for (const name of ["wait", "cancel", "inbox", "unknown"]) assert.isFalse(bodySends(call(name)), name)
    assert.isTrue(bodySends(call("progress", { action: "start" })))
    assert.isTrue(bodySends(call("progress", { action: "update" })))
    assert.isFalse(bodySends(call("progress", { action: "end" })))
    assert.isFalse(bodySends(call("progress", { action: "toString" })))
    assert.isTrue(bodySends(`[${call("inbox")},${call("notify")}]`), "a batch with one send")
    assert.isFalse(bodySends(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" })))
    assert.isFalse(bodySends("not json"))
    assert.isFalse(bodySends(""))
  })
})
