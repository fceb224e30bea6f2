/**
 * Authentication exactly per the spec's Authentication section, over HTTP with
 * the typed client: 401 for missing, malformed, unknown, revoked or expired
 * tokens; 403 MISSING_SCOPE listing every missing scope; revocation at once.
 */
import { assert, layer } from "@effect/vitest"
import { Scopes } from "@herald/api"
import { Effect } from "effect"
import { agentClient, makeAgent, makePerson, personClient, rawFetch, TestServerLayer } from "../../../../test/support/server.ts"
import { generateSecret } from "../../src/auth/Secrets.ts"

layer(TestServerLayer, { timeout: "120 seconds", excludeTestServices: true })("agent authentication", (it) => {
  it.effect("a valid token reads its own status", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["devices:read", "tokens:manage"])
      const status = yield* agent.client.auth.status()
      assert.strictEqual(status.authenticated, true)
      assert.strictEqual(status.userId, agent.person.id)
      assert.strictEqual(status.token.id, agent.token.id)
      assert.strictEqual(status.token.name, "test agent")
      assert.strictEqual(status.token.prefix, agent.secret.slice(0, 12))
      assert.deepStrictEqual([...status.token.scopes].sort(), ["devices:read", "tokens:manage"])
      assert.strictEqual(status.token.expiresAt, null)
      assert.isString(status.token.lastUsedAt)
      assert.strictEqual(status.token.createdAt, agent.token.createdAt)
    }))

  it.effect("a missing token is 401 UNAUTHORIZED with the spec's body", () =>
    Effect.gen(function*() {
      const res = yield* rawFetch("/api/agent/auth/status")
      assert.strictEqual(res.status, 401)
      const body = res.body as { error: string; code: string }
      assert.strictEqual(body.code, "UNAUTHORIZED")
      assert.isString(body.error)
      assert.deepStrictEqual(Object.keys(body).sort(), ["code", "error"])
    }))

  it.effect("a malformed, a wrong-checksum, a session and an unknown token are 401", () =>
    Effect.gen(function*() {
      const valid = generateSecret("hld")
      const wrongChecksum = valid.slice(0, -1) + (valid.endsWith("A") ? "B" : "A")
      const { session } = yield* makePerson()
      for (const token of ["nonsense", wrongChecksum, session, valid]) {
        const client = yield* agentClient(token)
        const error = yield* Effect.flip(client.auth.status())
        assert.strictEqual(error._tag, "Unauthorized", token)
      }
      const basic = yield* rawFetch("/api/agent/auth/status", { headers: { authorization: "Basic dXNlcjpwYXNz" } })
      assert.strictEqual(basic.status, 401)
    }))

  it.effect("an expired token is 401", () =>
    Effect.gen(function*() {
      const { session } = yield* makePerson()
      const app = yield* personClient(session)
      const soon = new Date(Date.now() + 3000).toISOString()
      const created = yield* app.tokens.create({ payload: { name: "short", scopes: [], expiresAt: soon } })
      const client = yield* agentClient(created.secret)
      const ok = yield* client.auth.status()
      assert.strictEqual(ok.token.expiresAt, created.token.expiresAt)
      yield* Effect.sleep("3100 millis")
      const error = yield* Effect.flip(client.auth.status())
      assert.strictEqual(error._tag, "Unauthorized")
    }))

  it.effect("auth/revoke revokes the calling token at once", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([])
      const result = yield* agent.client.auth.revoke()
      assert.deepStrictEqual(result, { ok: true })
      const error = yield* Effect.flip(agent.client.auth.status())
      assert.strictEqual(error._tag, "Unauthorized")
      const tokens = yield* agent.app.tokens.list()
      assert.isString(tokens.items.find((t) => t.id === agent.token.id)?.revokedAt)
    }))

  it.effect("a missing scope is 403 MISSING_SCOPE naming every missing scope", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["services:read"])
      const error = yield* Effect.flip(agent.client.tokens.list())
      assert.strictEqual(error._tag, "MissingScope")
      if (error._tag === "MissingScope") {
        assert.strictEqual(error.code, "MISSING_SCOPE")
        assert.deepStrictEqual(error.required, ["tokens:manage"])
      }
      const raw = yield* rawFetch("/api/agent/devices", { headers: { authorization: `Bearer ${agent.secret}` } })
      assert.strictEqual(raw.status, 403)
      assert.deepStrictEqual(raw.body, { error: "The token lacks scopes: devices:read.", code: "MISSING_SCOPE", required: ["devices:read"] })
    }))

  it.effect("a token with every scope passes every scope check", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(Scopes)
      yield* agent.client.tokens.list()
      yield* agent.client.devices.list()
      assert.strictEqual((yield* agent.client.auth.status()).token.scopes.length, Scopes.length)
    }))

  it.effect("401 comes before validation: an unauthenticated bad request is 401, not 400", () =>
    Effect.gen(function*() {
      const res = yield* rawFetch("/api/agent/tokens/not-an-id", { method: "DELETE" })
      assert.strictEqual(res.status, 401)
    }))
})
