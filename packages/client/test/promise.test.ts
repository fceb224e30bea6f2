/**
 * The Promise face reports each API error with the status its class carries
 * in the contract — every code, not only the common ones (a 409
 * `ACTIVITY_CAPACITY_EXCEEDED` or a 400 `WEBHOOK_TARGET_REFUSED` once came back
 * with no status at all).
 */
import { assert, layer } from "@effect/vitest"
import { createClient, HeraldError } from "@herald/client"
import { Effect } from "effect"
import { makeAgent, TestServer, TestServerLayer } from "../../../test/support/server.ts"

const rejection = (call: () => Promise<unknown>) =>
  Effect.promise(() => call().then(() => assert.fail("expected a rejection"), (e: unknown) => e as HeraldError))

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("Promise client", (it) => {
  it.effect("an API error carries its contract status and code", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const agent = yield* makeAgent(["interactions:create", "interactions:read", "services:write"])
      const herald = createClient({ baseUrl, token: agent.secret })
      const created = yield* Effect.promise(() =>
        herald.interactions.create({ headers: {}, payload: { kind: "approval", title: "Ship it?", prompt: "v2" } })
      )
      const id = created.interaction.id
      yield* Effect.promise(() => herald.interactions.cancel({ params: { id } }))
      const again = yield* rejection(() => herald.interactions.cancel({ params: { id } }))
      assert.instanceOf(again, HeraldError)
      assert.deepStrictEqual({ status: again.status, code: again.code }, { status: 409, code: "CONFLICT" })
      const refused = yield* rejection(() => herald.webhooks.create({ payload: { name: "inside", url: "https://10.0.0.1/hook" } }))
      assert.deepStrictEqual({ status: refused.status, code: refused.code }, { status: 400, code: "WEBHOOK_TARGET_REFUSED" })
      const missing = yield* rejection(() => herald.interactions.cancel({ params: { id: "int_0000000000000000000000000z" } }))
      assert.deepStrictEqual({ status: missing.status, code: missing.code }, { status: 404, code: "NOT_FOUND" })
      yield* Effect.promise(() => herald.close())
    }))
})
