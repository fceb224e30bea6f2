/**
 * Refusals that tell a newcomer what to do: a session token on the Agent API
 * (or an API token on the Person API) is the wrong kind of token, not a
 * "malformed" one; an unknown scope name lists the valid scopes. Over HTTP
 * with the typed client.
 */
import { assert, layer } from "@effect/vitest"
import { Scopes } from "@herald/api"
import { Effect } from "effect"
import { agentClient, makeAgent, makePerson, personClient, rawFetch, TestServerLayer } from "../../../../test/support/server.ts"

/** The message of a 401 (anything else fails the test). */
const unauthorized = (error: { readonly _tag: string }) => {
  assert.strictEqual(error._tag, "Unauthorized")
  return (error as unknown as { readonly error: string }).error
}

layer(TestServerLayer, { timeout: "120 seconds", excludeTestServices: true })("refusals that say why", (it) => {
  it.effect("a session token on the Agent API is the wrong kind of token (401)", () =>
    Effect.gen(function*() {
      const { session } = yield* makePerson()
      const message = unauthorized(yield* Effect.flip((yield* agentClient(session)).auth.status()))
      assert.include(message, "Wrong kind of token")
      assert.include(message, "session token (hls_…)")
      assert.include(message, "Agent API takes an API token (hld_…)")
      assert.notInclude(message, "Malformed")
    }))

  it.effect("an API token on the Person API is the wrong kind of token (401)", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([])
      const message = unauthorized(yield* Effect.flip((yield* personClient(agent.secret)).me.get()))
      assert.include(message, "Wrong kind of token")
      assert.include(message, "Person API takes a session token (hls_…)")
      const raw = yield* rawFetch("/api/app/me", { headers: { authorization: `Bearer ${agent.secret}` } })
      assert.deepStrictEqual([raw.status, (raw.body as { code: string }).code], [401, "UNAUTHORIZED"])
    }))

  it.effect("a token that is neither kind is still malformed", () =>
    Effect.gen(function*() {
      const message = unauthorized(yield* Effect.flip((yield* agentClient("nonsense")).auth.status()))
      assert.strictEqual(message, "Malformed API token.")
    }))

  it.effect("an unknown scope name lists the valid scopes in the VALIDATION_FAILED issue", () =>
    Effect.gen(function*() {
      const { session } = yield* makePerson()
      // Raw: the typed client would refuse to send an unknown scope.
      const res = yield* rawFetch("/api/app/tokens", {
        method: "POST",
        headers: { authorization: `Bearer ${session}`, "content-type": "application/json" },
        body: JSON.stringify({ name: "x", scopes: ["devices:read", "notification:send"] })
      })
      assert.strictEqual(res.status, 400)
      const body = res.body as { code: string; issues: ReadonlyArray<{ path: string; message: string }> }
      assert.strictEqual(body.code, "VALIDATION_FAILED")
      assert.strictEqual(body.issues.length, 1)
      assert.strictEqual(body.issues[0]!.path, "body.scopes[1]")
      for (const scope of Scopes) assert.include(body.issues[0]!.message, scope)
    }))
})
