/**
 * Prompts across three runners on one PostgreSQL database: a prompt created
 * through one node, waited on (long-poll) through a second and answered or
 * canceled through the third; the waiter wakes at once wherever the prompt's
 * actor lives. Once for each order of the nodes, then thirty at a time so the
 * prompts' actors sit on every runner.
 *
 * PostgreSQL only: the embedded database belongs to one process.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Context, Effect, Fiber, Layer } from "effect"
import { usingPostgres } from "../../support/database.ts"
import { agentClient, logsOnFailure, makePerson, personClient, startCluster } from "../../support/cluster.ts"
import type { Cluster } from "../../support/cluster.ts"

class Three extends Context.Service<Three, {
  readonly cluster: Cluster
  readonly session: string
  readonly token: string
}>()("test/cluster/PromptsCluster") {}

const ThreeLayer = Layer.effect(Three, Effect.gen(function*() {
  const cluster = yield* startCluster(3)
  const lin = yield* makePerson(cluster, "Lin")
  const app = yield* personClient(cluster.nodes[0]!, lin.session)
  const token = yield* app.tokens.create({ payload: { name: "three nodes", scopes: ["interactions:create", "interactions:read"] } })
  return { cluster, session: lin.session, token: token.secret }
}).pipe(Effect.orDie))

/** With each node's log tail printed if it fails. */
const explained = <A, E>(self: Effect.Effect<A, E, Three>) => Effect.flatMap(Three, ({ cluster }) => logsOnFailure(cluster)(self))

const orders = [[0, 1, 2], [1, 2, 0], [2, 0, 1]] as const

describe.runIf(usingPostgres)("prompts across three runners", () => {
  layer(ThreeLayer, { timeout: "180 seconds", excludeTestServices: true })((it) => {
    it.effect("created on one node, waited on at another, answered on the third: the waiter wakes at once", () =>
      Effect.gen(function*() {
        const { cluster, session, token } = yield* Three
        for (const [x, y, z] of orders) {
          const [create, wait, answer] = [cluster.nodes[x]!, cluster.nodes[y]!, cluster.nodes[z]!]
          const title = `Scale up (${create.name} → ${wait.name} → ${answer.name})?`
          const { interaction } = yield* (yield* agentClient(create, token)).interactions.create({
            payload: { kind: "yes_no", title, prompt: "p" }
          })
          const waiter = yield* Effect.forkChild((yield* agentClient(wait, token)).interactions.wait({ params: { id: interaction.id }, query: { timeout: 20 } }))
          // Parked on the prompt's actor before the answer (an answer first would return the wait at once anyway).
          yield* Effect.sleep("300 millis")
          const answeredAt = Date.now()
          yield* (yield* personClient(answer, session)).interactions.answer({ params: { id: interaction.id }, payload: { status: "yes" } })
          const woken = yield* Fiber.join(waiter)
          const after = Date.now() - answeredAt
          assert.strictEqual(woken.status, "yes", title)
          assert.isBelow(after, 2000, `${title}: woken by the answer (${after} ms), not by the timeout`)
        }
      }).pipe(explained))

    it.effect("a cancel on one node wakes a waiter on another", () =>
      Effect.gen(function*() {
        const { cluster, token } = yield* Three
        for (const [x, y] of orders) {
          const [create, wait] = [cluster.nodes[x]!, cluster.nodes[y]!]
          const creator = yield* agentClient(create, token)
          const { interaction } = yield* creator.interactions.create({ payload: { kind: "approval", title: `Deploy via ${create.name}?`, prompt: "p" } })
          const waiter = yield* Effect.forkChild((yield* agentClient(wait, token)).interactions.wait({ params: { id: interaction.id }, query: { timeout: 20 } }))
          yield* Effect.sleep("300 millis")
          const canceledAt = Date.now()
          yield* creator.interactions.cancel({ params: { id: interaction.id } })
          assert.strictEqual((yield* Fiber.join(waiter)).status, "canceled")
          assert.isBelow(Date.now() - canceledAt, 2000)
        }
      }).pipe(explained))

    it.effect("thirty prompts at once, each created, waited on and answered through three different nodes", () =>
      Effect.gen(function*() {
        const { cluster, session, token } = yield* Three
        const n = cluster.nodes.length
        const outcomes = yield* Effect.forEach(Array.from({ length: 30 }, (_, i) => i), (i) =>
          Effect.gen(function*() {
            const [create, wait, answer] = [cluster.nodes[i % n]!, cluster.nodes[(i + 1) % n]!, cluster.nodes[(i + 2) % n]!]
            const { interaction } = yield* (yield* agentClient(create, token)).interactions.create({
              payload: { kind: "yes_no", title: `Batch ${i}`, prompt: "p" }
            })
            const waiter = yield* Effect.forkChild((yield* agentClient(wait, token)).interactions.wait({ params: { id: interaction.id }, query: { timeout: 20 } }))
            yield* Effect.sleep("300 millis")
            const status = i % 2 === 0 ? "yes" : "no"
            const answeredAt = Date.now()
            yield* (yield* personClient(answer, session)).interactions.answer({ params: { id: interaction.id }, payload: { status } })
            const woken = yield* Fiber.join(waiter)
            return { i, status, woken: woken.status, ms: Date.now() - answeredAt }
          }), { concurrency: "unbounded" })
        for (const o of outcomes) assert.strictEqual(o.woken, o.status, `prompt ${o.i}`)
        const slowest = Math.max(...outcomes.map((o) => o.ms))
        console.log(`30 waiters across three runners: the slowest woke ${slowest} ms after its answer`)
        assert.isBelow(slowest, 3000, "every waiter woken by its answer, not by the timeout")
      }).pipe(explained))
  })
})
