/**
 * Cluster runners on one PostgreSQL database, in one test process: two nodes
 * of the service, each built as `herald serve` builds it on PostgreSQL (its
 * own pool, routes, workers and actor runtime: a runner on a free loopback
 * port, cluster/Runner.ts). A runner left registered by a crash does not hold
 * a starting node back; the shards split between the two; every entity lives
 * on exactly one runner and answers from either node; calls made while a
 * runner joins or leaves are answered, none refused; and a leaving runner's
 * due timers fire on the other. A runner killed outright is the e2e suite's
 * (test/e2e/cluster), with real processes.
 *
 * PostgreSQL only: the embedded database serves one process (a single runner).
 * `HERALD_TEST_TIMINGS=1` prints the measured times.
 */
import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Context, Effect, Exit, Fiber, Layer, Redacted, Schema, Scope } from "effect"
import { Entity, Runner, RunnerAddress, RunnerStorage, ShardingConfig, SqlRunnerStorage } from "effect/cluster"
import { HttpServer } from "effect/http"
import { Rpc } from "effect/rpc"
import { SqlClient } from "effect/sql"
import { Deadline, deadlineRpc } from "../../src/cluster/Deadline.ts"
import { postgresLayer } from "../../src/db/Database.ts"
import { CapabilitiesLayer, serviceLayer } from "../../src/runtime/Server.ts"
import { freshPostgres, usingPostgres } from "../../../../test/support/database.ts"
import { eventually } from "../../../../test/support/eventually.ts"
import { freePort } from "../../../../test/support/process.ts"
import { agentClient, makeAgent, TestServer } from "../../../../test/support/server.ts"

/** An entity that says which node it lives on, and records where and when its timer fired. */
const Probe = Entity.make("RunnerProbe", [
  Rpc.make("Where", { success: Schema.String }),
  deadlineRpc("Ring")
])

const rings = new Map<string, { readonly node: string; readonly at: number }>()

const probeLayer = (node: string) =>
  Probe.toLayer({
    Where: () => Effect.succeed(node),
    Ring: ({ address }) =>
      Effect.sync(() => {
        if (!rings.has(address.entityId)) rings.set(address.entityId, { node, at: Date.now() })
      })
  })

/** A node as `herald serve` runs on PostgreSQL: `DATABASE_URL` makes its actor runtime a runner (cluster/Cluster.ts). */
const nodeLayer = (url: string, name: string) =>
  Layer.merge(
    Layer.effect(TestServer, Effect.map(HttpServer.HttpServer, (server) => {
      if (server.address._tag === "UnixPathAddress") throw new Error("expected a TCP address")
      return { baseUrl: `http://127.0.0.1:${server.address.port}` }
    })),
    probeLayer(name)
  ).pipe(
    Layer.provideMerge(serviceLayer({ port: 0, host: "127.0.0.1" })),
    Layer.provideMerge(CapabilitiesLayer.pipe(
      // An address (port 0: the one bound) on each node: without it a node beside a live runner refuses to start.
      Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({ DATABASE_URL: url, HERALD_PUSH_PAUSED: "true", HERALD_RUNNER_ADDRESS: "127.0.0.1:0" })))
    )),
    // The runner keeps one connection for its shard locks, the listeners one each.
    Layer.provideMerge(postgresLayer(Redacted.make(url), 6))
  )

interface Node {
  readonly name: string
  readonly context: Context.Context<Layer.Success<ReturnType<typeof nodeLayer>>>
}

const startNode = (url: string, name: string, scope: Scope.Scope) =>
  Effect.map(Layer.buildWithScope(Layer.fresh(nodeLayer(url, name)), scope), (context): Node => ({ name, context }))

const on = <A, E, R>(node: Node, effect: Effect.Effect<A, E, R>) => Effect.provide(effect, node.context)

/** Which node the entity `id` answers from, asked through `node`. */
const where = (node: Node, id: string) => on(node, Effect.flatMap(Probe.client, (client) => client(id).Where()))

const ids = (n: number, prefix = "probe") => Array.from({ length: n }, (_, i) => `${prefix}-${i}`)

/** Shards held, per PostgreSQL session: the runners' advisory locks (one per shard, keys 1000001–1000300). */
const shardHolders = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<{ readonly pid: number; readonly shards: number }>`
    SELECT pid, count(*)::int AS shards FROM pg_locks
    WHERE locktype = 'advisory' AND objsubid = 2 AND objid BETWEEN 1000001 AND 1000300
      AND database = (SELECT oid FROM pg_database WHERE datname = current_database())
    GROUP BY pid`)

const registeredRunners = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM cluster_runners WHERE healthy`, (rows) => rows[0]!.n))

/** A runner that died without unregistering (kill -9): listed, healthy, nothing listening at its address. */
const registerDeadRunner = (url: string) =>
  Effect.gen(function*() {
    const port = yield* freePort
    const storage = yield* RunnerStorage.RunnerStorage
    yield* storage.register(Runner.make({ address: RunnerAddress.make("127.0.0.1", port), groups: ["default"], weight: 1 }), true)
  }).pipe(
    Effect.provide(Layer.orDie(SqlRunnerStorage.layer).pipe(Layer.provide(ShardingConfig.layer()), Layer.provide(postgresLayer(Redacted.make(url), 2)))),
    Effect.scoped,
    Effect.orDie
  )

const timings = (figures: Record<string, number | string>) =>
  Effect.sync(() => {
    if (process.env.HERALD_TEST_TIMINGS === "1") console.log(`runners: ${JSON.stringify(figures)}`)
  })

describe.runIf(usingPostgres)("cluster runners on one PostgreSQL database", () => {
  it.live("split the shards, answer every entity from either node, and hand shards and timers over when one leaves", () =>
    Effect.scoped(Effect.gen(function*() {
      const url = yield* freshPostgres
      yield* registerDeadRunner(url)

      // A starts with the dead runner still listed: it owns every shard, and its first entity calls answer at once.
      const startA = Date.now()
      const a = yield* startNode(url, "A", yield* Effect.scope)
      const ready = Date.now()
      assert.deepStrictEqual(yield* Effect.forEach(ids(10, "first"), (id) => where(a, id), { concurrency: 10 }), Array(10).fill("A"))
      const firstCalls = Date.now() - ready
      assert.isBelow(firstCalls, 1000, "the first entity calls of a fresh runner wait for nothing")
      assert.deepStrictEqual(yield* on(a, shardHolders).pipe(Effect.map((rows) => rows.map((r) => r.shards))), [300])

      // B joins while calls through A go on: every call is answered, none refused.
      const calls = { made: 0, failed: 0, slowest: 0 }
      const caller = yield* Effect.forkChild(Effect.forever(Effect.forEach(ids(30, "steady"), (id) => {
        const sent = Date.now()
        return Effect.exit(where(a, id)).pipe(Effect.map((exit) => {
          calls.made++
          if (Exit.isFailure(exit)) calls.failed++
          calls.slowest = Math.max(calls.slowest, Date.now() - sent)
        }))
      }, { concurrency: 10, discard: true })))
      const scopeB = yield* Scope.fork(yield* Effect.scope)
      const startB = Date.now()
      const b = yield* startNode(url, "B", scopeB)
      const joined = Date.now()
      // Settled: two sessions hold all 300 shard locks between them, each a fair share (a hash ring's, about half).
      const holders = yield* on(a, eventually(shardHolders, (rows) =>
        rows.length === 2 && rows[0]!.shards + rows[1]!.shards === 300 && rows.every((r) => r.shards > 50)))
      const split = Date.now() - joined
      yield* Fiber.interrupt(caller)
      assert.strictEqual(calls.failed, 0, `${calls.failed} of ${calls.made} calls failed while B joined`)
      assert.isAbove(calls.made, 30)
      // One actor runtime per node, not one per capability.
      assert.strictEqual(yield* on(a, registeredRunners), 2)

      // Each entity lives on one runner, whichever node calls it.
      const viaA = yield* Effect.forEach(ids(60), (id) => where(a, id), { concurrency: 20 })
      const viaB = yield* Effect.forEach(ids(60), (id) => where(b, id), { concurrency: 20 })
      assert.deepStrictEqual(viaB, viaA)
      assert.includeMembers(viaA, ["A", "B"])

      // A prompt made on A, waited on through B, answered on A.
      const agent = yield* on(a, makeAgent(["interactions:create", "interactions:read"]))
      const throughB = yield* on(b, agentClient(agent.secret))
      const { interaction } = yield* agent.client.interactions.create({ payload: { kind: "yes_no", title: "Ship?", prompt: "p" } })
      const waiter = yield* Effect.forkChild(throughB.interactions.wait({ params: { id: interaction.id }, query: { timeout: 20 } }))
      const answered = Date.now()
      yield* agent.app.interactions.answer({ params: { id: interaction.id }, payload: { status: "yes" } })
      assert.strictEqual((yield* Fiber.join(waiter)).status, "yes")
      assert.isBelow(Date.now() - answered, 1000)

      // B leaves (as on SIGTERM) before timers of its entities fall due: A takes its shards and fires them.
      const onB = ids(60).filter((_, i) => viaA[i] === "B").slice(0, 5)
      const due = Date.now() + 4000
      yield* Effect.forEach(onB, (id) => on(a, Effect.flatMap(Probe.client, (client) => client(id).Ring(Deadline.at(due), { discard: true }))))
      const stopping = Date.now()
      yield* Scope.close(scopeB, Exit.void)
      const stopped = Date.now() - stopping
      assert.isBelow(Date.now(), due, "B stopped before the timers were due")
      assert.deepStrictEqual(yield* Effect.forEach(onB, (id) => where(a, id)), onB.map(() => "A"))
      const handedOver = Date.now() - stopping
      assert.strictEqual(yield* on(a, registeredRunners), 1, "a runner that stops unregisters")
      const fired = yield* eventually(Effect.sync(() => onB.map((id) => rings.get(id))), (all) => all.every((r) => r !== undefined))
      for (const ring of fired) {
        assert.strictEqual(ring!.node, "A")
        assert.isAtLeast(ring!.at, due)
        assert.isBelow(ring!.at - due, 1500, "fired within a poll or two of its time")
      }

      yield* timings({
        startA: ready - startA,
        firstCalls,
        startB: joined - startB,
        split,
        shards: holders.map((h) => h.shards).join("/"),
        slowestCallDuringJoin: calls.slowest,
        stopB: stopped,
        handedOver,
        latestRing: Math.max(...fired.map((r) => r!.at - due))
      })
    })), { timeout: 120_000 })
})
