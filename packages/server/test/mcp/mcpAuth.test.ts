/**
 * Who may use the MCP endpoint, at the HTTP level: no token answers 401 with
 * the `WWW-Authenticate` challenge that starts an MCP client's OAuth flow
 * (exactly), a refused token the same plus `error="invalid_token"`; an OAuth
 * access token works with its own scopes; a token revoked mid-session is
 * refused on its next request (and a waiting `ask` ends with UNAUTHORIZED);
 * other methods answer 405 with `Allow`; DELETE ends a session; the edge's
 * body limit and body guard apply; a request calling a sending tool counts
 * against the token's send limit.
 */
import { assert, layer } from "@effect/vitest"
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Effect, Fiber } from "effect"
import { SqlClient } from "effect/sql"
import { Credentials } from "../../src/auth/Credentials.ts"
import { generateSecret, hashSecret } from "../../src/auth/Secrets.ts"
import { AppConfig } from "../../src/config/AppConfig.ts"
import { makeId } from "../../src/lib/Ids.ts"
import { MCP_SCOPES } from "../../src/oauth/McpScopes.ts"
import { eventually } from "../../../../test/support/eventually.ts"
import { makeAgent, rawFetch, testServerLayer, TestServerLayer } from "../../../../test/support/server.ts"
import { callTool, connect, MCP_URL_PATH, toolNamesOf } from "./mcpSupport.ts"

const initialize = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } }
})

const post = (headers: Record<string, string>, body = initialize) =>
  rawFetch(MCP_URL_PATH, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "application/json, text/event-stream", ...headers },
    body
  })

/** The challenge a 401 carries, from the server's own public URL. */
const challenge = Effect.map(Effect.provide(Effect.service(AppConfig), AppConfig.layer), ({ publicUrl }) =>
  `Bearer resource_metadata="${publicUrl}/.well-known/oauth-protected-resource/api/agent/mcp", ` +
  `scope="notifications:send interactions:create interactions:read activities:write oncall:write inbox:read"`)

/** The SDK's error for an HTTP status (it throws a StreamableHTTPError with the status as its code). */
const httpStatusOf = (error: unknown) => error instanceof StreamableHTTPError ? error.code : undefined

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("MCP: authentication", (it) => {
  it.effect("no token answers 401 with the WWW-Authenticate challenge exactly and Herald's error body", () =>
    Effect.gen(function*() {
      const res = yield* post({})
      assert.strictEqual(res.status, 401)
      assert.strictEqual(res.headers.get("www-authenticate"), yield* challenge)
      assert.deepStrictEqual(res.body, {
        error: "Missing bearer token: send Authorization: Bearer <token> (an API token or an OAuth access token).",
        code: "UNAUTHORIZED"
      })
    }))

  it.effect("a refused token answers 401 with error=\"invalid_token\" and says why", () =>
    Effect.gen(function*() {
      const expected = `${yield* challenge}, error="invalid_token"`
      const unknown = yield* post({ authorization: `Bearer ${generateSecret("hld")}` })
      assert.strictEqual(unknown.status, 401)
      assert.strictEqual(unknown.headers.get("www-authenticate"), expected)
      assert.deepStrictEqual(unknown.body, { error: "Unknown or revoked API token.", code: "UNAUTHORIZED" })
      const malformed = yield* post({ authorization: "Bearer hld_nope" })
      assert.deepStrictEqual([malformed.status, (malformed.body as { error: string }).error], [401, "Malformed API token."])
      const session = yield* post({ authorization: `Bearer ${generateSecret("hls")}` })
      assert.include((session.body as { error: string }).error, "Wrong kind of token")
      const basic = yield* post({ authorization: "Basic dXNlcjpwYXNz" })
      assert.strictEqual(basic.status, 401)
      assert.strictEqual(basic.headers.get("www-authenticate"), expected)
    }))

  it.effect("an OAuth access token connects as its grant, offered the tools of its own scopes", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(MCP_SCOPES)
      const sql = yield* SqlClient.SqlClient
      const clientId = yield* makeId("ocl")
      const access = generateSecret("hlo")
      yield* sql`INSERT INTO oauth_clients (id, name) VALUES (${clientId}, 'Remote Tool')`
      yield* sql`UPDATE api_tokens SET kind = 'oauth', oauth_client_id = ${clientId} WHERE id = ${agent.token.id}`
      yield* sql`INSERT INTO oauth_access_tokens (token_hash, token_id, scopes, expires_at)
                 VALUES (${hashSecret(access)}, ${agent.token.id}, ARRAY['notifications:send', 'inbox:read'],
                         ${new Date(Date.now() + 3_600_000).toISOString()})`
      const connected = yield* connect(access)
      assert.deepStrictEqual(yield* toolNamesOf(connected), ["inbox", "notify"])
      const inbox = yield* callTool(connected, "inbox", {})
      assert.isFalse(inbox.isError)

      // Signing the client out (DELETE /tokens/{id}) refuses its next request.
      yield* agent.app.tokens.revoke({ params: { id: agent.token.id } })
      const refused = yield* Effect.flip(Effect.tryPromise(() => connected.client.listTools()))
      assert.strictEqual(httpStatusOf(refused.cause), 401)
    }).pipe(Effect.orDie))

  it.effect("a token revoked mid-session is refused on its next request, and a waiting ask ends UNAUTHORIZED", () =>
    Effect.gen(function*() {
      const credentials = yield* Credentials
      const agent = yield* makeAgent(MCP_SCOPES)
      const connected = yield* connect(agent.secret)
      assert.lengthOf(yield* toolNamesOf(connected), 7)
      const sessionId = connected.transport.sessionId!

      const asking = yield* Effect.forkChild(callTool(connected, "ask", { kind: "yes_no", title: "Proceed?", prompt: "Proceed?" }))
      yield* eventually(Effect.sync(() => credentials.holding(agent.token.id)), (n) => n === 1)
      yield* agent.app.tokens.revoke({ params: { id: agent.token.id } })

      const ended = yield* Fiber.join(asking)
      assert.isTrue(ended.isError)
      assert.deepStrictEqual(ended.json, { error: "The token was revoked while this request waited.", code: "UNAUTHORIZED" })

      const refused = yield* Effect.flip(Effect.tryPromise(() => connected.client.listTools()))
      assert.strictEqual(httpStatusOf(refused.cause), 401)
      const raw = yield* post({ authorization: `Bearer ${agent.secret}`, "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25" },
        JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }))
      assert.strictEqual(raw.status, 401)
      assert.include(raw.headers.get("www-authenticate") ?? "", `error="invalid_token"`)
    }))

  it.effect("GET and other methods answer 405 with Allow; DELETE ends the session", () =>
    Effect.gen(function*() {
      for (const method of ["GET", "PUT", "PATCH"]) {
        const res = yield* rawFetch(MCP_URL_PATH, { method })
        assert.strictEqual(res.status, 405, method)
        assert.strictEqual(res.headers.get("allow"), "DELETE, POST")
        assert.deepStrictEqual(res.body, { error: "Method not allowed.", code: "METHOD_NOT_ALLOWED" })
      }
      const agent = yield* makeAgent(MCP_SCOPES)
      const connected = yield* connect(agent.secret)
      const sessionId = connected.transport.sessionId!
      yield* Effect.promise(() => connected.transport.terminateSession())
      const gone = yield* post({ authorization: `Bearer ${agent.secret}`, "mcp-session-id": sessionId, "mcp-protocol-version": "2025-11-25" },
        JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }))
      assert.strictEqual(gone.status, 404)
      assert.deepStrictEqual(gone.body, {
        code: "NOT_FOUND",
        error: "No such MCP session (it was ended, or this token never opened it): send initialize to start a new one."
      })
    }))

  it.effect("an Origin other than Herald's own is refused (DNS rebinding)", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(MCP_SCOPES)
      const res = yield* post({ authorization: `Bearer ${agent.secret}`, origin: "https://evil.example" })
      assert.strictEqual(res.status, 403)
      assert.deepStrictEqual(res.body, { code: "FORBIDDEN", error: "This Origin may not use the MCP endpoint." })
    }))

  it.effect("the edge's body limit applies, and a body is guarded once the token checks out", () =>
    Effect.gen(function*() {
      const tooLarge = yield* rawFetch(MCP_URL_PATH, {
        method: "POST",
        headers: { "content-type": "application/json", "content-length": String(1024 * 1024 + 1) },
        body: "x".repeat(1024 * 1024 + 1)
      })
      assert.strictEqual(tooLarge.status, 413)
      assert.strictEqual((tooLarge.body as { code: string }).code, "PAYLOAD_TOO_LARGE")
      const deep = "[".repeat(100) + "]".repeat(100)
      const anonymous = yield* post({}, deep)
      assert.strictEqual(anonymous.status, 401, "not read before authentication")
      const agent = yield* makeAgent(MCP_SCOPES)
      const guarded = yield* post({ authorization: `Bearer ${agent.secret}` }, deep)
      assert.strictEqual(guarded.status, 400)
      assert.strictEqual((guarded.body as { code: string }).code, "VALIDATION_FAILED")
    }))
})

layer(testServerLayer({ HERALD_SEND_LIMIT_PER_MINUTE: "1" }), { excludeTestServices: true, timeout: "60 seconds" })("MCP: rate limits", (it) => {
  it.effect("a request calling a sending tool counts as a send; reading tools do not", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(MCP_SCOPES)
      const connected = yield* connect(agent.secret)
      const first = yield* callTool(connected, "notify", { title: "One", body: "first" })
      assert.isFalse(first.isError)
      const second = yield* Effect.flip(callTool(connected, "notify", { title: "Two", body: "second" }))
      assert.strictEqual(httpStatusOf(second), 429)
      assert.include(second.message, "RATE_LIMITED")
      // Not a send: still served.
      const inbox = yield* callTool(connected, "inbox", {})
      assert.isFalse(inbox.isError)
      const end = yield* callTool(connected, "progress", { action: "end", key: "nothing" })
      assert.strictEqual(end.json.code, "NOT_FOUND")
    }))
})
