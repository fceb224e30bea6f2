/**
 * A call the actor runtime cannot take answers 503 `SERVICE_UNAVAILABLE` with
 * `Retry-After`, never 500. Provoked for real: the service runs with a
 * resident-entity cap of one (`ShardingConfig.maxResidentEntities`), so once
 * one prompt's entity is awake, a call to another prompt's entity is refused
 * by the cluster (`MailboxFull`) — what a node at its cap does under load.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { TestSqlLayer } from "../../../../test/support/database.ts"
import { serviceOnDatabase } from "../../../../test/support/prompts.ts"
import { makeAgent, rawFetch } from "../../../../test/support/server.ts"

const CappedServerLayer = serviceOnDatabase({ maxResidentEntities: 1 }).pipe(Layer.provideMerge(TestSqlLayer))

layer(CappedServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("entity calls at the runtime's limit", (it) => {
  it.effect("answer 503 SERVICE_UNAVAILABLE with Retry-After, change nothing, and leave other calls working", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["interactions:create", "interactions:read"])
      const ask = (title: string) =>
        Effect.map(agent.client.interactions.create({ payload: { kind: "approval", title, prompt: "?" } }), (c) => c.interaction)
      const first = yield* ask("first")
      const second = yield* ask("second")

      // The first prompt's entity wakes (and stays resident while idle): the cap is reached.
      const canceled = yield* agent.client.interactions.cancel({ params: { id: first.id } })
      assert.strictEqual(canceled.status, "canceled")

      const refused = yield* rawFetch(`/api/agent/interactions/${second.id}/cancel`, {
        method: "POST",
        headers: { authorization: `Bearer ${agent.secret}` }
      })
      assert.strictEqual(refused.status, 503)
      assert.strictEqual(refused.headers.get("retry-after"), "1")
      assert.deepStrictEqual(refused.body, { error: "The service is busy; try again shortly.", code: "SERVICE_UNAVAILABLE" })

      // The typed clients decode it as the declared error, on the Person API too.
      const viaClient = yield* Effect.flip(agent.client.interactions.cancel({ params: { id: second.id } }))
      assert.strictEqual(viaClient._tag, "ServiceUnavailable")
      const answered = yield* Effect.flip(agent.app.interactions.answer({ params: { id: second.id }, payload: { status: "approved" } }))
      assert.strictEqual(answered._tag, "ServiceUnavailable")

      // Nothing changed, and calls that need no new entity still work.
      assert.strictEqual((yield* agent.client.interactions.get({ params: { id: second.id } })).status, "pending")
      assert.strictEqual((yield* agent.client.interactions.wait({ params: { id: first.id } })).status, "canceled")
    }))
})
