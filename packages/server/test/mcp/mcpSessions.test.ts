/**
 * MCP session hygiene (mcp/McpSessions.ts), with the official SDK as the
 * client: a session answers only the token that opened it (another token's
 * request or DELETE with its id is a 404 like an unknown session, and the
 * session lives on); a token's 17th session ends its least recently used;
 * the sweep ends a session idle for 30 minutes (TestClock, no sleeping) and
 * those of a revoked token; a DELETE unregisters the session.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { TestClock } from "effect/testing"
import { MAX_SESSIONS_PER_TOKEN, McpSessions } from "../../src/mcp/McpSessions.ts"
import { MCP_SCOPES } from "../../src/oauth/McpScopes.ts"
import { makeAgent, rawFetch, TestServerLayer } from "../../../../test/support/server.ts"
import { connect, MCP_URL_PATH } from "./mcpSupport.ts"
import type { Connected } from "./mcpSupport.ts"

const UNKNOWN_SESSION = {
  code: "NOT_FOUND",
  error: "No such MCP session (it was ended, or this token never opened it): send initialize to start a new one."
}

const headersOf = (secret: string, sessionId: string) => ({
  authorization: `Bearer ${secret}`,
  "mcp-session-id": sessionId,
  "mcp-protocol-version": "2025-11-25"
})

/** `tools/list` by hand in a session, with a token (not necessarily the session's). */
const listTools = (secret: string, sessionId: string) =>
  rawFetch(MCP_URL_PATH, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headersOf(secret, sessionId) },
    body: JSON.stringify({ jsonrpc: "2.0", id: 7, method: "tools/list" })
  })

const deleteSession = (secret: string, sessionId: string) =>
  rawFetch(MCP_URL_PATH, { method: "DELETE", headers: headersOf(secret, sessionId) })

const sessionIdOf = (connected: Connected) => connected.transport.sessionId!

/** The status of a `tools/list` in the session (200 when it lives, 404 when it was ended). */
const statusIn = (secret: string, sessionId: string) => Effect.map(listTools(secret, sessionId), (res) => res.status)

/**
 * What the MCP runtime itself answers in a session (the registry answers 404 for any id it does not
 * know, before the runtime): the id is registered under a fresh token, which then asks.
 */
const runtimeStatus = (sessionId: string) =>
  Effect.gen(function*() {
    const probe = yield* makeAgent(MCP_SCOPES)
    yield* (yield* McpSessions).opened(sessionId, probe.token.id)
    return yield* statusIn(probe.secret, sessionId)
  })

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("MCP: sessions", (it) => {
  it.effect("a session id used with another token answers 404 like an unknown session; the owner's session lives on", () =>
    Effect.gen(function*() {
      const owner = yield* makeAgent(MCP_SCOPES)
      const other = yield* makeAgent(MCP_SCOPES)
      const connected = yield* connect(owner.secret)
      const sessionId = sessionIdOf(connected)

      const foreign = yield* listTools(other.secret, sessionId)
      assert.strictEqual(foreign.status, 404)
      assert.deepStrictEqual(foreign.body, UNKNOWN_SESSION)
      const unknown = yield* listTools(other.secret, crypto.randomUUID())
      assert.deepStrictEqual([unknown.status, unknown.body], [404, UNKNOWN_SESSION])
      // Nor can another token end it.
      const ended = yield* deleteSession(other.secret, sessionId)
      assert.deepStrictEqual([ended.status, ended.body], [404, UNKNOWN_SESSION])

      const { tools } = yield* Effect.promise(() => connected.client.listTools())
      assert.strictEqual(tools.length, 7)
      assert.strictEqual(yield* statusIn(owner.secret, sessionId), 200)
    }))

  it.effect("a token's 17th session ends its least recently used one; the others answer", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(MCP_SCOPES)
      const sessions = yield* McpSessions
      const opened: Array<string> = []
      for (let i = 0; i < MAX_SESSIONS_PER_TOKEN; i++) opened.push(sessionIdOf(yield* connect(agent.secret)))
      assert.strictEqual(sessions.count(agent.token.id), MAX_SESSIONS_PER_TOKEN)
      // The first is used again: the second (last used while it connected) is now the least recently used.
      assert.strictEqual(yield* statusIn(agent.secret, opened[0]!), 200)

      const newest = sessionIdOf(yield* connect(agent.secret))
      assert.strictEqual(sessions.count(agent.token.id), MAX_SESSIONS_PER_TOKEN)
      const evicted = yield* listTools(agent.secret, opened[1]!)
      assert.deepStrictEqual([evicted.status, evicted.body], [404, UNKNOWN_SESSION])
      for (const id of [opened[0]!, ...opened.slice(2), newest]) assert.strictEqual(yield* statusIn(agent.secret, id), 200, id)
      // Ended in the MCP runtime too, not only forgotten by the registry.
      assert.strictEqual(yield* runtimeStatus(opened[1]!), 404)
    }))

  it.effect("the sweep ends a session idle for 30 minutes; one used since survives", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(MCP_SCOPES)
      const sessions = yield* McpSessions
      const idle = sessionIdOf(yield* connect(agent.secret))
      const used = sessionIdOf(yield* connect(agent.secret))

      // 31 minutes on: `used` is used then (what every request of it records), `idle` is not.
      yield* TestClock.setTime(Date.now() + 31 * 60_000)
      yield* sessions.touch(used)
      const swept = yield* sessions.sweep
      assert.isAtLeast(swept.idle, 1)

      assert.isUndefined(sessions.ownerOf(idle))
      const gone = yield* listTools(agent.secret, idle)
      assert.deepStrictEqual([gone.status, gone.body], [404, UNKNOWN_SESSION])
      assert.strictEqual(sessions.ownerOf(used), agent.token.id)
      assert.strictEqual(yield* statusIn(agent.secret, used), 200)
      // The MCP runtime forgot the idle one and still serves the other.
      assert.strictEqual(yield* runtimeStatus(idle), 404)
      assert.strictEqual(yield* runtimeStatus(used), 200)
    }).pipe(Effect.provide(TestClock.layer())))

  it.effect("the sweep ends the sessions of a revoked token", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(MCP_SCOPES)
      const bystander = yield* makeAgent(MCP_SCOPES)
      const sessions = yield* McpSessions
      const ended = [sessionIdOf(yield* connect(agent.secret)), sessionIdOf(yield* connect(agent.secret))]
      const standing = sessionIdOf(yield* connect(bystander.secret))
      assert.strictEqual(sessions.count(agent.token.id), 2)

      yield* agent.app.tokens.revoke({ params: { id: agent.token.id } }).pipe(Effect.orDie)
      const swept = yield* sessions.sweep
      assert.isAtLeast(swept.revoked, 2)
      assert.strictEqual(sessions.count(agent.token.id), 0)
      assert.strictEqual(yield* statusIn(bystander.secret, standing), 200)
      for (const id of ended) assert.strictEqual(yield* runtimeStatus(id), 404)
    }))

  it.effect("a DELETE ends the session and unregisters it", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(MCP_SCOPES)
      const sessions = yield* McpSessions
      const before = sessions.count()
      const connected = yield* connect(agent.secret)
      const sessionId = sessionIdOf(connected)
      assert.strictEqual(sessions.count(), before + 1)
      assert.strictEqual(sessions.ownerOf(sessionId), agent.token.id)

      yield* Effect.promise(() => connected.transport.terminateSession())
      assert.strictEqual(sessions.count(), before)
      assert.strictEqual(sessions.count(agent.token.id), 0)
      assert.isUndefined(sessions.ownerOf(sessionId))
      assert.strictEqual(yield* statusIn(agent.secret, sessionId), 404)
    }))
})
