/**
 * An attempt a node began and never completed (it died mid-send, so the
 * receiver may have got the event) is in the attempt log: once its lease
 * lapses the sweeper closes it as interrupted, and a queued delivery is sent
 * again with the same id. The dead node is stood in for by the row it would
 * leave: an attempt begun, its lease lapsed. (test/e2e/deliveries.test.ts
 * kills a real server mid-send.)
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { randomBytes } from "node:crypto"
import { eventually } from "../../../../test/support/eventually.ts"
import { receiver } from "../../../../test/support/prompts.ts"
import { makeAgent, testServerLayer } from "../../../../test/support/server.ts"

const open = { HERALD_ALLOW_PRIVATE_NETWORK_TARGETS: "1", HERALD_RETRY_TIME_SCALE: "0.001" }

/** The row a node leaves when it dies during attempt 1: begun 30 s ago, its lease lapsed 5 s ago. */
const cutShort = (options: { readonly userId: string; readonly webhookId: string; readonly queued: boolean }) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const id = `whd_${randomBytes(12).toString("hex")}`
    const startedAt = new Date(Date.now() - 30_000).toISOString()
    yield* sql`
      INSERT INTO reply_webhook_deliveries
        (id, user_id, webhook_id, type, payload, next_attempt_at, attempt_started_at, leased_until)
      VALUES (${id}, ${options.userId}, ${options.webhookId}, 'interaction.answered', '{"type":"interaction.answered"}',
              ${options.queued ? startedAt : null}, ${startedAt}, now() - interval '5 seconds')`
    return { id, startedAt }
  }).pipe(Effect.orDie)

layer(testServerLayer(open), { excludeTestServices: true, timeout: "60 seconds" })("interrupted reply attempts", (it) => {
  it.effect("an attempt cut short is logged as interrupted; a queued delivery is sent again with the same id", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["services:read", "services:write"])
      const target = yield* receiver()
      const { webhook } = yield* agent.client.webhooks.create({ payload: { name: "gate", url: `${target.url}/events` } })
      const queued = yield* cutShort({ userId: agent.person.id, webhookId: webhook.id, queued: true })
      const sample = yield* cutShort({ userId: agent.person.id, webhookId: webhook.id, queued: false })

      const read = yield* eventually(
        agent.client.webhooks.get({ params: { id: webhook.id } }),
        (w) => w.deliveries.find((d) => d.id === queued.id)?.status === "delivered" && w.deliveries.some((d) => d.id === sample.id && d.attempts === 1)
      )
      const resent = read.deliveries.find((d) => d.id === queued.id)!
      assert.strictEqual(resent.attempts, 2)
      assert.deepStrictEqual(resent.attemptLog.map((a) => [a.attempt, a.status, a.responseCode, a.latencyMs]), [
        [1, "retrying", null, 0],
        [2, "delivered", 200, resent.attemptLog[1]!.latencyMs]
      ])
      assert.match(resent.attemptLog[0]!.error ?? "", /^interrupted/)
      // Dated when the attempt began (the timestamp codec keeps milliseconds).
      assert.strictEqual(resent.attemptLog[0]!.attemptedAt, queued.startedAt)
      assert.deepStrictEqual(target.received.map((r) => r.headers["webhook-id"]), [queued.id])

      // A sample event is sent once, in its request: cut short, it fails, and is not sent again.
      const once = read.deliveries.find((d) => d.id === sample.id)!
      assert.strictEqual(once.status, "failed")
      assert.deepStrictEqual(once.attemptLog.map((a) => [a.attempt, a.status, a.responseCode]), [[1, "failed", null]])
      assert.isNull(once.nextAttemptAt)
    }))
})
