/**
 * Reply events are delivered at least once: a real `herald serve` is killed
 * (SIGKILL) while its request to the receiver is in flight; once the
 * delivery's lease has lapsed, the next process logs the attempt the crash cut
 * short as interrupted (the receiver got it) and sends the event again with
 * the same `webhook-id` and body, so the receiver can deduplicate.
 *
 * The test lets the lease lapse while no server runs (its `leased_until`
 * moved to the past, what 15 s of waiting would do), so the restarted
 * server's sweeper finds the cut attempt on its first pass; retries are
 * scaled (`HERALD_RETRY_TIME_SCALE`) so the resend is due at once.
 */
import { assert, describe, it } from "@effect/vitest"
import { HeraldClient, HeraldPersonClient } from "@herald/client"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { createHmac } from "node:crypto"
import { childDatabase } from "../support/database.ts"
import { eventually } from "../support/eventually.ts"
import { startServer } from "../support/process.ts"
import { receiver } from "../support/prompts.ts"
import { onDatabaseOf, personOn, within } from "../support/serverClients.ts"

const clients = (baseUrl: string, session: string, token: string) =>
  Effect.all({
    app: Effect.provide(Effect.service(HeraldPersonClient), HeraldPersonClient.layer({ baseUrl, token: session, retries: 0 })),
    agent: Effect.provide(Effect.service(HeraldClient), HeraldClient.layer({ baseUrl, token, retries: 0 }))
  })

describe("reply event delivery across a crash", () => {
  it.live("resends an event whose attempt a crash cut short, with the same webhook-id", () =>
    Effect.scoped(Effect.gen(function*() {
      const { env: database } = yield* childDatabase
      // A retry 5 ms after the attempt began rather than 5 s: due when the lapsed lease is found.
      const env = { ...database, HERALD_ALLOW_PRIVATE_NETWORK_TARGETS: "1", HERALD_RETRY_TIME_SCALE: "0.001" }
      // The first request is never answered: the server dies while it waits.
      const target = yield* receiver((n) => n === 0 ? { status: -1 } : { status: 204 })
      const first = yield* startServer(env)
      const { session } = yield* personOn(env, { email: "kim@example.test", name: "Kim" })
      const { app } = yield* clients(first.baseUrl, session, "unused")
      const token = yield* app.tokens.create({ payload: { name: "crash", scopes: ["services:write", "services:read", "interactions:create"] } })
      const { agent } = yield* clients(first.baseUrl, session, token.secret)
      const { signingSecret, webhook } = yield* agent.webhooks.create({ payload: { name: "gate", url: `${target.url}/events` } })
      const { interaction } = yield* agent.interactions.create({
        payload: { kind: "approval", title: "Deploy?", prompt: "p", webhookId: webhook.id }
      })
      yield* agent.interactions.cancel({ params: { id: interaction.id } })
      yield* eventually(Effect.sync(() => target.received.length), (n) => n === 1)
      yield* first.kill

      // While no server runs the lease lapses (15 s after the attempt began, had the test waited).
      const lapsed = yield* onDatabaseOf(env)(Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql`UPDATE reply_webhook_deliveries SET leased_until = now() - interval '1 second'
            WHERE webhook_id = ${webhook.id} AND attempt_started_at IS NOT NULL RETURNING id`))
      assert.lengthOf(lapsed, 1, "the cut attempt is still open, leased")

      const second = yield* startServer(env)
      yield* within(30, Effect.sync(() => target.received.length), (n) => n >= 2, "the event sent again")
      const [cut, resent] = target.received
      assert.strictEqual(resent!.headers["webhook-id"], cut!.headers["webhook-id"])
      assert.strictEqual(resent!.body, cut!.body)
      const key = Buffer.from(signingSecret.replace(/^whsec_/, ""), "base64")
      const signature = createHmac("sha256", key)
        .update(`${resent!.headers["webhook-id"]}.${resent!.headers["webhook-timestamp"]}.${resent!.body}`)
        .digest("base64")
      assert.strictEqual(resent!.headers["webhook-signature"], `v1,${signature}`)
      const after = yield* clients(second.baseUrl, session, token.secret)
      // Recorded once the receiver's answer is in, just after the test has seen the request.
      const read = yield* eventually(after.agent.webhooks.get({ params: { id: webhook.id } }), (w) => w.deliveries[0]?.status === "delivered")
      const delivery = read.deliveries[0]!
      assert.strictEqual(delivery.id, cut!.headers["webhook-id"])
      // Both requests the receiver got are logged: the cut one with no answer, the resent one delivered.
      assert.strictEqual(delivery.attempts, 2)
      assert.deepStrictEqual(delivery.attemptLog.map((a) => [a.attempt, a.status, a.responseCode]), [
        [1, "retrying", null],
        [2, "delivered", 204]
      ])
      assert.match(delivery.attemptLog[0]!.error ?? "", /interrupted/)
      // The cut attempt is dated when it began, before the crash; the resent one after the restart.
      assert.isTrue(Date.parse(delivery.attemptLog[0]!.attemptedAt) <= Date.parse(delivery.attemptLog[1]!.attemptedAt))
    })), { timeout: 120_000 })
})
