/**
 * The prompt-deadlines worker: a prompt committed without its expiry timer
 * (the process died between the commit and the timer) gets one when the
 * service starts again, and expires by it — here at once, its deadline having
 * passed while the service was down.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { TestSqlLayer } from "../../../../test/support/database.ts"
import { eventually } from "../../../../test/support/eventually.ts"
import { serviceOnDatabase } from "../../../../test/support/prompts.ts"
import { agentClient, makeAgent } from "../../../../test/support/server.ts"

layer(TestSqlLayer, { excludeTestServices: true, timeout: "60 seconds" })("prompt deadlines at start", (it) => {
  it.effect("a pending prompt without a stored timer is given one at start and expires by it", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient

      // First run: the prompt is created, then its timer is lost and its deadline passes while down.
      const { id, secret } = yield* Effect.scoped(Effect.gen(function*() {
        const agent = yield* makeAgent(["interactions:create", "interactions:read"])
        const created = yield* agent.client.interactions.create({
          payload: { kind: "approval", title: "Ship it?", prompt: "One migration." }
        })
        return { id: created.interaction.id, secret: agent.secret }
      }).pipe(Effect.provide(serviceOnDatabase())))
      yield* sql`DELETE FROM cluster_messages WHERE entity_type = 'Prompt' AND entity_id = ${id}`
      yield* sql`UPDATE interactions SET expires_at = now() - interval '1 second' WHERE id = ${id}`

      // Second run on the same database: the worker stores the timer, which fires at once.
      const expired = yield* Effect.scoped(Effect.gen(function*() {
        const client = yield* agentClient(secret)
        return yield* eventually(client.interactions.get({ params: { id } }), (i) => i.status === "expired")
      }).pipe(Effect.provide(serviceOnDatabase())))
      assert.strictEqual(expired.status, "expired")
      const timers = yield* sql<{ n: number }>`
        SELECT count(*)::int AS n FROM cluster_messages WHERE entity_type = 'Prompt' AND entity_id = ${id}`
      assert.strictEqual(timers[0]!.n, 1)
    }))
})
