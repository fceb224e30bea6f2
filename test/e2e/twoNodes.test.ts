/**
 * Two `herald serve` processes on one PostgreSQL database: an agent waits on
 * one, the person answers through the other, and the wait returns at once —
 * the answering process's NOTIFY reaches the waiting process's prompt entity.
 * The second process also sees a cancel made on the first.
 *
 * PostgreSQL only: the embedded database belongs to one process.
 */
import { assert, describe, it } from "@effect/vitest"
import { HeraldClient, HeraldPersonClient } from "@herald/client"
import { Effect, Fiber } from "effect"
import { childDatabase, usingPostgres } from "../support/database.ts"
import { cliJson, startServer } from "../support/process.ts"

const clients = (baseUrl: string, session: string, token: string) =>
  Effect.all({
    app: Effect.provide(Effect.service(HeraldPersonClient), HeraldPersonClient.layer({ baseUrl, token: session, retries: 0 })),
    agent: Effect.provide(Effect.service(HeraldClient), HeraldClient.layer({ baseUrl, token, retries: 0 }))
  })

describe.runIf(usingPostgres)("prompts across two processes", () => {
  it.live("a waiter on one process is woken by an answer or a cancel made on the other", () =>
    Effect.scoped(Effect.gen(function*() {
      const { env } = yield* childDatabase
      const [one, two] = yield* Effect.all([startServer(env), startServer(env)], { concurrency: 2 })
      const person = yield* cliJson<{ id: string }>(["admin", "user", "create", "--email", "lin@example.test", "--name", "Lin"], env)
      const session = yield* cliJson<{ token: string }>(["admin", "session", "create", "--user", person.id], env)
      const first = yield* clients(one.baseUrl, session.token, "unused")
      const token = yield* first.app.tokens.create({ payload: { name: "two nodes", scopes: ["interactions:create", "interactions:read"] } })
      const a = yield* clients(one.baseUrl, session.token, token.secret)
      const b = yield* clients(two.baseUrl, session.token, token.secret)

      const { interaction } = yield* a.agent.interactions.create({
        headers: {},
        payload: { kind: "yes_no", title: "Scale up?", prompt: "p" }
      })
      const waiter = yield* Effect.forkChild(a.agent.interactions.wait({ params: { id: interaction.id }, query: { timeout: 20 } }))
      yield* Effect.sleep("300 millis")
      const answeredAt = Date.now()
      yield* b.app.interactions.answer({ params: { id: interaction.id }, payload: { status: "yes" } })
      const woken = yield* Fiber.join(waiter)
      assert.strictEqual(woken.status, "yes")
      assert.isBelow(Date.now() - answeredAt, 1000, "woken by the other process's answer, not by the timeout")

      const second = yield* a.agent.interactions.create({ headers: {}, payload: { kind: "yes_no", title: "Again?", prompt: "p" } })
      const otherWaiter = yield* Effect.forkChild(b.agent.interactions.wait({ params: { id: second.interaction.id }, query: { timeout: 20 } }))
      yield* Effect.sleep("300 millis")
      const canceledAt = Date.now()
      yield* a.agent.interactions.cancel({ params: { id: second.interaction.id } })
      assert.strictEqual((yield* Fiber.join(otherWaiter)).status, "canceled")
      assert.isBelow(Date.now() - canceledAt, 1000)
    })), { timeout: 120_000 })
})
