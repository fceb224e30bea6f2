/**
 * Reply events are delivered at least once: a real `herald serve` is killed
 * (SIGKILL) while its request to the receiver is in flight; after the restart
 * the delivery's lease lapses, the attempt the crash cut short is logged as
 * interrupted (the receiver got it), and the event is sent again with the
 * same `webhook-id` and body, so the receiver can deduplicate.
 */
import { assert, describe, it } from "@effect/vitest"
import { HeraldClient, HeraldPersonClient } from "@herald/client"
import { Duration, Effect } from "effect"
import { createHmac } from "node:crypto"
import { childDatabase } from "../support/database.ts"
import { eventually } from "../support/eventually.ts"
import { cliJson, startServer } from "../support/process.ts"
import { receiver } from "../support/prompts.ts"

const clients = (baseUrl: string, session: string, token: string) =>
  Effect.all({
    app: Effect.provide(Effect.service(HeraldPersonClient), HeraldPersonClient.layer({ baseUrl, token: session, retries: 0 })),
    agent: Effect.provide(Effect.service(HeraldClient), HeraldClient.layer({ baseUrl, token, retries: 0 }))
  })

/** Polls for up to a minute (a lease lapses 15 s after its attempt began; the sweeper looks every 5 s). */
const within = <A, E, R>(read: Effect.Effect<A, E, R>, check: (a: A) => boolean) =>
  Effect.gen(function*() {
    for (let i = 0; i < 600; i++) {
      const value = yield* read
      if (check(value)) return value
      yield* Effect.sleep(Duration.millis(100))
    }
    return yield* Effect.die(new Error("condition not reached within 60 s"))
  })

describe("reply event delivery across a crash", () => {
  it.live("resends an event whose attempt a crash cut short, with the same webhook-id", () =>
    Effect.scoped(Effect.gen(function*() {
      const { env: database } = yield* childDatabase
      const env = { ...database, HERALD_ALLOW_PRIVATE_NETWORK_TARGETS: "1" }
      // The first request is never answered: the server dies while it waits.
      const target = yield* receiver((n) => n === 0 ? { status: -1 } : { status: 204 })
      const first = yield* startServer(env)
      const person = yield* cliJson<{ id: string }>(["admin", "user", "create", "--email", "kim@example.test", "--name", "Kim"], env)
      const session = yield* cliJson<{ token: string }>(["admin", "session", "create", "--user", person.id], env)
      const { app } = yield* clients(first.baseUrl, session.token, "unused")
      const token = yield* app.tokens.create({ payload: { name: "crash", scopes: ["services:write", "services:read", "interactions:create"] } })
      const { agent } = yield* clients(first.baseUrl, session.token, token.secret)
      const { signingSecret, webhook } = yield* agent.webhooks.create({ payload: { name: "gate", url: `${target.url}/events` } })
      const { interaction } = yield* agent.interactions.create({
        payload: { kind: "approval", title: "Deploy?", prompt: "p", webhookId: webhook.id }
      })
      yield* agent.interactions.cancel({ params: { id: interaction.id } })
      yield* eventually(Effect.sync(() => target.received.length), (n) => n === 1)
      yield* first.kill

      const second = yield* startServer(env)
      yield* within(Effect.sync(() => target.received.length), (n) => n >= 2)
      const [cut, resent] = target.received
      assert.strictEqual(resent!.headers["webhook-id"], cut!.headers["webhook-id"])
      assert.strictEqual(resent!.body, cut!.body)
      const key = Buffer.from(signingSecret.replace(/^whsec_/, ""), "base64")
      const signature = createHmac("sha256", key)
        .update(`${resent!.headers["webhook-id"]}.${resent!.headers["webhook-timestamp"]}.${resent!.body}`)
        .digest("base64")
      assert.strictEqual(resent!.headers["webhook-signature"], `v1,${signature}`)
      const after = yield* clients(second.baseUrl, session.token, token.secret)
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
