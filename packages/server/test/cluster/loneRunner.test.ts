/**
 * A node without `HERALD_RUNNER_ADDRESS` runs alone (decisions.md, "Runners";
 * cluster/Runner.ts): a real `herald serve` started without it on a database
 * where another runner is live exits 1 with one line naming the setting and
 * never registers; one on a database of its own starts; and one restarted
 * right after a kill -9, its dead runner's row still listed as healthy and
 * fresh, starts too, at once, and takes the dead runner's place.
 *
 * PostgreSQL only: on the embedded database there are no runners.
 */
import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Fiber, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { postgresLayer } from "../../src/db/Database.ts"
import { balanced, startCluster } from "../../../../test/support/cluster.ts"
import { childDatabase, usingPostgres } from "../../../../test/support/database.ts"
import { eventually } from "../../../../test/support/eventually.ts"
import { cli, freePort, startServer } from "../../../../test/support/process.ts"

/** Runs `self` against the database at `url`, as a test looking at the runners' table from outside. */
const onDatabase = (url: string) => <A, E>(self: Effect.Effect<A, E, SqlClient.SqlClient>) =>
  self.pipe(Effect.provide(postgresLayer(Redacted.make(url), 2)), Effect.orDie)

/** Every row of `cluster_runners`: address, health, and whether its heartbeat is within the 10 s lock expiration. */
const runnerRows = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  sql<{ readonly address: string; readonly healthy: boolean; readonly fresh: boolean }>`
    SELECT address, healthy, last_heartbeat > NOW() - INTERVAL '10 seconds' AS fresh FROM cluster_runners ORDER BY address`)

/** Shard locks held in this database (effect/cluster's advisory locks, one per shard). */
const shardLocks = Effect.flatMap(SqlClient.SqlClient, (sql) =>
  Effect.map(
    sql<{ readonly n: number }>`
      SELECT count(*)::int AS n FROM pg_locks
      WHERE locktype = 'advisory' AND granted AND objsubid = 2 AND objid BETWEEN 1000001 AND 1000300
        AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    (rows) => rows[0]!.n
  ))

const refusal = (addresses: string) =>
  `herald: other cluster runners are live on this database (${addresses}) and HERALD_RUNNER_ADDRESS is unset: ` +
  "set it on every node to where the other nodes reach that node (host:port)"

/** The loopback address a node without the setting says it is reached at. */
const loneAddress = (output: string) => {
  const match = /runner (127\.0\.0\.1:\d+), alone; set HERALD_RUNNER_ADDRESS on every node to run several/.exec(output)
  assert.isNotNull(match, output)
  return match![1]!
}

describe.runIf(usingPostgres)("a node without HERALD_RUNNER_ADDRESS", () => {
  it.live("beside a live runner: exits 1 naming the setting, registers nothing, and the runner serves on", () =>
    Effect.scoped(Effect.gen(function*() {
      const cluster = yield* startCluster(1)
      const node = cluster.nodes[0]!
      yield* balanced(cluster)

      const second = yield* cli(["serve"], { ...cluster.env, PORT: String(yield* freePort) })
      assert.strictEqual(second.code, 1, second.stderr)
      const lines = second.stderr.split("\n").filter((line) => line.startsWith("herald: "))
      assert.deepStrictEqual(lines, [refusal(node.runnerAddress)])

      const rows = yield* onDatabase(cluster.databaseUrl)(runnerRows)
      assert.deepStrictEqual(rows.map((r) => [r.address, r.healthy]), [[node.runnerAddress, true]])
      assert.strictEqual((yield* Effect.promise(() => fetch(`${node.baseUrl}/readyz`))).status, 200)
    })), { timeout: 120_000 })

  it.live("alone: starts; after kill -9 starts again at once over its dead runner's fresh row; a second beside it is refused", () =>
    Effect.scoped(Effect.gen(function*() {
      const db = yield* childDatabase
      const url = db.env.DATABASE_URL!
      const on = onDatabase(url)

      const first = yield* startServer(db.env)
      const dead = loneAddress(first.output())
      yield* on(eventually(shardLocks, (n) => n === 300))
      yield* first.kill

      // Its row stays as it was left, healthy, as if killed a moment ago however long the restart takes to boot.
      const keepFresh = yield* Effect.forkChild(on(Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql`UPDATE cluster_runners SET last_heartbeat = NOW() WHERE address = ${dead}`.pipe(
          Effect.andThen(Effect.sleep(Duration.millis(200))),
          Effect.forever
        ))))
      assert.deepStrictEqual((yield* on(runnerRows)).map((r) => [r.address, r.healthy, r.fresh]), [[dead, true, true]])

      const restarted = yield* startServer(db.env)
      const alive = loneAddress(restarted.output())
      // It saw the dead runner listed, healthy and fresh (markKilled reads the same rows, after the check), and started.
      assert.include(restarted.output(), `cluster runner ${dead} is registered but refuses connections: marked unhealthy`)
      assert.notInclude(restarted.output(), "other cluster runners are live")
      yield* Fiber.interrupt(keepFresh)
      // It holds every shard: the dead runner's lock session is gone.
      yield* on(eventually(shardLocks, (n) => n === 300))

      const beside = yield* cli(["serve"], { ...db.env, PORT: String(yield* freePort) })
      assert.strictEqual(beside.code, 1, beside.stderr)
      assert.include(beside.stderr, refusal(alive))
      assert.strictEqual((yield* Effect.promise(() => fetch(`${restarted.baseUrl}/readyz`))).status, 200)
    })), { timeout: 120_000 })
})
