/**
 * Long-poll waits held open through shard handovers. Two runners on one
 * PostgreSQL database hold 24 pending prompts (created through both, so their
 * actors sit on both), each waited on through node `a` with a plain `fetch`
 * (no retry: what curl, `herald ask` between its own calls or an MCP `ask`
 * sees). While the waits are open, node `b` is stopped with SIGTERM (its
 * shards, and the actors the waits are parked on, move to `a` at once) and
 * started again (it takes its share back from `a`), then a third runner `c`
 * joins (taking a share from both). Each handover ends the actors on the
 * shards that move; a wait parked on one must follow its prompt to the new
 * owner. Then every prompt is answered through `b`: every wait answers 200
 * with its answer, after the answer — none 503, none early.
 *
 * PostgreSQL only: the embedded database belongs to one process.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { usingPostgres } from "../../support/database.ts"
import { agentClient, balanced, makePerson, personClient, startCluster } from "../../support/cluster.ts"
import type { ClusterNode } from "../../support/cluster.ts"

const PROMPTS = 24
const WAIT_SECONDS = 60

/** `GET /interactions/{id}/wait` with a plain fetch: its status, body and when it answered. */
const rawWait = (node: ClusterNode, token: string, id: string) =>
  Effect.promise(async () => {
    const response = await fetch(`${node.baseUrl}/api/agent/interactions/${id}/wait?timeout=${WAIT_SECONDS}`, {
      headers: { authorization: `Bearer ${token}` }
    })
    const text = await response.text()
    return { status: response.status, text, at: Date.now() }
  })

describe.runIf(usingPostgres)("long-poll waits through shard handovers", () => {
  it.live("a runner restarted and another joining while waits are open: every wait answers 200 with its answer", () =>
    Effect.scoped(Effect.gen(function*() {
      const cluster = yield* startCluster(3)
      const [a, b, c] = [cluster.nodes[0]!, cluster.nodes[1]!, cluster.nodes[2]!]
      // `c` joins later, as a new runner.
      assert.isTrue(yield* c.stop, "node c exited by itself on SIGTERM")
      yield* balanced(cluster)
      const lin = yield* makePerson(cluster, "Lin")
      const app = yield* personClient(a, lin.session)
      const { secret } = yield* app.tokens.create({ payload: { name: "waiter", scopes: ["interactions:create", "interactions:read"] } })
      const prompts = yield* Effect.forEach(Array.from({ length: PROMPTS }, (_, i) => i), (i) =>
        Effect.flatMap(agentClient(i % 2 === 0 ? a : b, secret), (agent) =>
          agent.interactions.create({ payload: { kind: "yes_no", title: `Question ${i}`, prompt: "p" } })), {
        concurrency: 6
      })

      const waitsStarted = Date.now()
      const waits = yield* Effect.forEach(prompts, (p) => Effect.forkChild(rawWait(a, secret, p.interaction.id)))
      // Parked on the prompts' actors before the first handover.
      yield* Effect.sleep("1 second")

      // A deploy restarts `b`: its shards go to `a`, then half come back to it.
      const stopping = Date.now()
      assert.isTrue(yield* b.stop, "node b exited by itself on SIGTERM")
      yield* b.start
      yield* balanced(cluster)
      // A third runner joins and takes its share from both.
      const joining = Date.now()
      yield* c.start
      yield* balanced(cluster)
      const answeredAt = Date.now()
      const handovers = answeredAt - waitsStarted
      assert.isBelow(handovers, (WAIT_SECONDS - 10) * 1000, "the handovers end well before the waits time out")

      const person = yield* personClient(b, lin.session)
      const statuses = prompts.map((_, i) => (i % 3 === 0 ? "no" : "yes") as "yes" | "no")
      yield* Effect.forEach(prompts, (p, i) => person.interactions.answer({ params: { id: p.interaction.id }, payload: { status: statuses[i]! } }), {
        concurrency: 6,
        discard: true
      })
      const results = yield* Fiber.joinAll(waits)
      const refused = results.filter((r) => r.status !== 200)
      const seconds = (ms: number) => (ms / 1000).toFixed(1)
      console.log(`${PROMPTS} waits through a restart of b (${seconds(joining - stopping)} s to balanced) and c joining ` +
        `(${seconds(answeredAt - joining)} s): ` +
        `${PROMPTS - refused.length} answered 200` + (refused.length === 0 ? "" : `, ${refused.map((r) => r.status).join(", ")}`))
      results.forEach((r, i) => {
        assert.strictEqual(r.status, 200, `wait ${i}: ${r.text}`)
        assert.strictEqual((JSON.parse(r.text) as { status: string }).status, statuses[i], `wait ${i}`)
        assert.isAtLeast(r.at, answeredAt, `wait ${i} answered by the answer, not before it`)
      })
    })), { timeout: 240_000 })
})
