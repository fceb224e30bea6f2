/**
 * One trace across two runners (issue 33): two `herald serve` processes on
 * one PostgreSQL database, each exporting over OTLP/JSON to a receiver run
 * here. A prompt answered (and one canceled) through a node that does not
 * hold the prompt's entity is forwarded to the runner that does; the route's
 * span on the first process, the entity call's client span under it, and the
 * entity's handler and its transition on the second process are one trace.
 *
 * Which runner holds a prompt is its id's shard: prompts are made until one's
 * handler ran in the other process (a shard split that never sends a prompt
 * to the other runner in twenty tries is itself a fault, and fails here).
 *
 * PostgreSQL only: the embedded database belongs to one process.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { usingPostgres } from "../../support/database.ts"
import { agentClient, balanced, makePerson, personClient, startCluster } from "../../support/cluster.ts"
import type { ClusterNode } from "../../support/cluster.ts"
import { descendsFrom, otlpReceiver, spanNamed } from "../../support/otlpReceiver.ts"
import type { OtlpReceiver, ReceivedSpan } from "../../support/otlpReceiver.ts"

/** Prompts tried before concluding that none is held by the other runner. */
const TRIES = 20

/** Runs `self` in a span of the test's own, whose trace the typed client carries to the node (`traceparent`). */
const traced = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.flatMap(Effect.orDie(Effect.currentSpan), (span) => Effect.map(self, (a) => [span.traceId.padStart(32, "0"), a] as const)).pipe(
    Effect.withSpan("test request")
  )

const named = (spans: ReadonlyArray<ReceivedSpan>, names: ReadonlyArray<string>) => names.every((n) => spans.some((s) => s.name === n))
const pidOf = (span: ReceivedSpan) => span.resource["process.pid"]

/**
 * Makes prompts and `act`s on each through `via` (one traced request) until the prompt's `Prompt.<rpc>` handler
 * ran in another process than the request's `route` span; answers that trace's spans, or dies naming every try.
 */
const forwarded = <E1, E2, R1, R2>(
  receiver: OtlpReceiver,
  via: ClusterNode,
  make: (i: number) => Effect.Effect<string, E1, R1>,
  act: (id: string) => Effect.Effect<unknown, E2, R2>,
  route: string,
  rpc: "Answer" | "Cancel"
) =>
  Effect.gen(function*() {
    const tries: Array<string> = []
    for (let i = 0; i < TRIES; i++) {
      const id = yield* make(i)
      const [traceId] = yield* traced(act(id))
      const spans = yield* receiver.trace(traceId, (s) => named(s, [route, `Prompt.client.${rpc}`, `Prompt.${rpc}`, "Transitions.apply"]))
      const [request, handler] = [spanNamed(spans, route), spanNamed(spans, `Prompt.${rpc}`)]
      assert.strictEqual(pidOf(request), via.pid(), `${rpc} of ${id}: the route's span is from the node that took the request`)
      if (pidOf(handler) !== pidOf(request)) return { id, traceId, spans, local: tries.length }
      tries.push(`${id} (handled in pid ${String(pidOf(handler))})`)
    }
    return yield* Effect.die(
      new Error(`none of ${TRIES} prompts' Prompt.${rpc} ran off node ${via.name} (pid ${via.pid()}): are the shards split? ${tries.join(", ")}`)
    )
  })

/** The trace of a request forwarded from `via` to `holder`: one trace id, both processes, the handler under the route. */
const checkForwarded = (
  found: { readonly id: string; readonly traceId: string; readonly spans: ReadonlyArray<ReceivedSpan> },
  via: ClusterNode,
  holder: ClusterNode,
  route: string,
  rpc: "Answer" | "Cancel"
) => {
  const { id, spans, traceId } = found
  const request = spanNamed(spans, route)
  const call = spanNamed(spans, `Prompt.client.${rpc}`)
  const handler = spanNamed(spans, `Prompt.${rpc}`)
  const transition = spanNamed(spans, "Transitions.apply")
  for (const s of spans) assert.strictEqual(s.traceId, traceId)
  assert.sameMembers([...new Set(spans.map(pidOf))], [via.pid(), holder.pid()], `${rpc}: spans from both processes, and only those`)
  assert.strictEqual(request.kind, "server")
  assert.isDefined(request.parentSpanId, "the test's span is the route span's parent")
  // The call leaves the first process…
  assert.strictEqual(call.kind, "client")
  assert.strictEqual(pidOf(call), via.pid())
  assert.isTrue(descendsFrom(spans, call, request), `${rpc}: the entity call is under the route`)
  // …and the handler on the other continues it, carried by the envelope's span ids across the runners.
  assert.strictEqual(handler.kind, "server")
  assert.strictEqual(pidOf(handler), holder.pid())
  assert.strictEqual(handler.parentSpanId, call.spanId)
  assert.isTrue(descendsFrom(spans, handler, request), `${rpc}: the handler descends from the request's span`)
  assert.strictEqual(handler.attributes["entity.type"], "Prompt")
  assert.strictEqual(handler.attributes["entity.id"], id)
  assert.strictEqual(pidOf(transition), holder.pid())
  assert.isTrue(descendsFrom(spans, transition, handler), `${rpc}: the transition is under the handler`)
}

describe.runIf(usingPostgres)("one trace across two runners over OTLP", () => {
  it.live("an answer and a cancel forwarded to the prompt's runner: one trace, from both processes", () =>
    Effect.scoped(Effect.gen(function*() {
      // The receiver first, so that it outlives the nodes (their shutdown flushes reach it).
      const receiver = yield* otlpReceiver
      const cluster = yield* startCluster(2, receiver.env)
      const [a, b] = [cluster.nodes[0]!, cluster.nodes[1]!]
      // Both runners hold shards before any prompt is made: else every prompt would be the first node's.
      yield* balanced(cluster)
      const lin = yield* makePerson(cluster, "Lin")
      const app = yield* personClient(a, lin.session)
      const { secret } = yield* app.tokens.create({ payload: { name: "traces", scopes: ["interactions:create", "interactions:read"] } })
      // Made through b, acted on through a: where a prompt is made does not decide where its entity lives.
      const maker = yield* agentClient(b, secret)
      const agent = yield* agentClient(a, secret)
      const make = (kind: "yes_no" | "approval") => (i: number) =>
        Effect.map(maker.interactions.create({ payload: { kind, title: `Traced ${kind} ${i}`, prompt: "p" } }), (r) => r.interaction.id)

      const answerRoute = "POST /api/app/interactions/:id/answer"
      const answered = yield* forwarded(receiver, a, make("yes_no"), (id) =>
        Effect.tap(app.interactions.answer({ params: { id }, payload: { status: "yes" } }), (r) =>
          Effect.sync(() => assert.strictEqual(r.status, "yes"))), answerRoute, "Answer")
      checkForwarded(answered, a, b, answerRoute, "Answer")

      const cancelRoute = "POST /api/agent/interactions/:id/cancel"
      const canceled = yield* forwarded(receiver, a, make("approval"), (id) =>
        Effect.tap(agent.interactions.cancel({ params: { id } }), (r) => Effect.sync(() => assert.strictEqual(r.status, "canceled"))), cancelRoute, "Cancel")
      checkForwarded(canceled, a, b, cancelRoute, "Cancel")

      console.log(`forwarded and traced: answer ${answered.id} (${answered.spans.length} spans, after ${answered.local} held by ${a.name}), ` +
        `cancel ${canceled.id} (${canceled.spans.length} spans, after ${canceled.local} held by ${a.name})`)
    })), { timeout: 180_000 })
})
