/**
 * This process as one `effect/cluster` runner of any number on one PostgreSQL
 * database (chosen by Cluster.ts on PostgreSQL). It is what
 * `NodeClusterSocket.layer({ storage: "sql", runnerHealth: "ping" })` builds,
 * from the same pieces, with two differences: the sharding settings are
 * Herald's own (that layer reads them with `ShardingConfig.layerFromEnv`, where
 * plain `PORT` and `HOST` are Herald's HTTP settings), and the runner socket
 * is bound before they are made, so "a free port" is the port bound, not one
 * probed and bound again (servers starting together could pick the same).
 *
 * - Transport: TCP between runners, binary framing; an entity called on a node
 *   that does not own its shard is forwarded to the owner over it.
 * - Runner storage: `cluster_runners` (address, heartbeat, health) and one
 *   PostgreSQL session advisory lock per shard, held on one pool connection
 *   reserved for the purpose; a shard's entities run only where its lock is.
 * - Message storage: `cluster_messages`/`cluster_replies`, mailboxes and timers.
 * - Health: runners ping each other over the same sockets.
 * - Start: a node without `HERALD_RUNNER_ADDRESS` (a loopback address) runs
 *   alone; beside live runners it refuses to start.
 */
import * as NodeClusterSocket from "@effect/platform-node/NodeClusterSocket"
import * as NodeSocketServer from "@effect/platform-node/NodeSocketServer"
import { Data, Duration, Effect, Equal, Layer, Option, Schema } from "effect"
import { RunnerAddress, RunnerHealth, Runners, RunnerServer, RunnerStorage, ShardingConfig, SqlMessageStorage, SqlRunnerStorage } from "effect/cluster"
import { RpcSerialization, RpcServer } from "effect/rpc"
import { SocketServer } from "effect/socket"
import { SqlClient, SqlSchema } from "effect/sql"
import * as net from "node:net"
import type { ClusterConfigShape, HostPort } from "../config/ClusterConfig.ts"
import { formatHostPort } from "../config/ClusterConfig.ts"

type Settings = Partial<ShardingConfig.ShardingConfig["Service"]>

/**
 * How fast a runner's death or departure moves its shards. Bound: a runner
 * killed (`kill -9`) has its shards taken, and their due timers fired, within
 * 15 s; docs/architecture.md#the-actor-runtime works the sum.
 */
export const runnerTimings = {
  /**
   * A runner that stops refreshing (frozen, or its host gone without closing
   * its connection) loses its shards after this: PostgreSQL ends its idle lock
   * session, releasing the locks, and its heartbeat stops counting.
   */
  shardLockExpiration: Duration.seconds(10),
  /** Locks and the heartbeat are refreshed every 3 s (at most a third of the expiration). */
  shardLockRefreshInterval: Duration.seconds(3),
  /** Each runner re-reads the runners and their health every second: how soon a known departure moves shards. */
  refreshAssignmentsInterval: Duration.seconds(1),
  /** One runner pings the others every 2 s; a dead one fails its ping and retries in about 2.5 s and is marked unhealthy. */
  runnerHealthCheckInterval: Duration.seconds(2),
  /** A joining runner takes its share at its first read: no quiet period. */
  runnerJoinDebounce: Duration.zero,
  /**
   * A shard handed to another runner waits for its entities' calls in
   * progress this long before cutting them (a call still running then
   * would hold its whole shard, every entity on it, for up to the default
   * 15 s at each join). A call cut so is answered 503; a persisted message
   * is delivered again on the new owner. Shutdown cuts them at once. A
   * prompt's long-poll does not wait for this: it is cut the moment its
   * shard moves and parked again on the new owner, unseen by the caller
   * (PromptProtocol.ts, `EntityCalls.callUntil`).
   */
  entityTerminationTimeout: Duration.seconds(3),
  /** A message for a shard between owners is retried inside the runtime this often, rather than answered 503. */
  sendRetryInterval: Duration.millis(100)
} satisfies Settings

/** The runner could not listen for the other runners. */
export class RunnerListenError extends Data.TaggedError("RunnerListenError")<{ readonly message: string }> {}

const listenFailure = (where: HostPort, error: SocketServer.SocketServerError) => {
  const cause = error.reason.cause as { readonly code?: unknown } | undefined
  const code = typeof cause?.code === "string" ? ` (${cause.code})` : ""
  return new RunnerListenError({
    message: `cannot listen for the other cluster runners on ${formatHostPort(where)}${code}; ` +
      "set HERALD_RUNNER_ADDRESS (or HERALD_RUNNER_LISTEN_ADDRESS) to a free port of this host"
  })
}

/** A node without `HERALD_RUNNER_ADDRESS` on a database where other runners are live: it does not start. */
export class RunnerAddressRequired extends Data.TaggedError("RunnerAddressRequired")<{ readonly message: string }> {}

/**
 * effect/cluster's key space for the shard advisory locks, as pg_locks shows
 * it (`classid`, an unsigned oid): the FNV-1a hash of `effect-cluster:cluster`
 * that SqlRunnerStorage keeps as a fixed wire format.
 */
const shardLockSpace = (() => {
  let hash = 0x811c9dc5
  for (const byte of new TextEncoder().encode("effect-cluster:cluster")) hash = Math.imul(hash ^ byte, 0x01000193)
  return hash >>> 0
})()

/**
 * The runners live on the database: healthy, their heartbeat within the lock
 * expiration, and shards held by some session. The locks tell a runner killed
 * a moment ago (its row still fresh) from a live one: PostgreSQL ends a killed
 * process's session, and its locks with it, as soon as its connection closes.
 * A live runner holds its share of the shards all the time.
 */
const liveRunners = (expiration: Duration.Input) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    SqlSchema.findAll({
      Request: Schema.Number,
      Result: Schema.Struct({ address: Schema.String }),
      execute: (seconds) =>
        sql`SELECT address FROM cluster_runners
            WHERE healthy AND last_heartbeat > NOW() - make_interval(secs => ${seconds})
              AND EXISTS (SELECT 1 FROM pg_locks
                          WHERE locktype = 'advisory' AND granted AND objsubid = 2 AND classid::bigint = ${shardLockSpace}
                            AND database = (SELECT oid FROM pg_database WHERE datname = current_database()))
            ORDER BY address`
    })(Duration.toSeconds(expiration)))

/**
 * Without `HERALD_RUNNER_ADDRESS` a runner is reached at a loopback address,
 * so beside runners on other hosts it would hold shards they cannot reach:
 * such a node refuses to start while others are live (decisions.md, "Runners").
 * Read before registering, and before `markKilled`, which could mark a live
 * runner of another host unhealthy (its loopback address refuses here).
 */
const refuseBesideLiveRunners = (expiration: Duration.Input) =>
  Effect.flatMap(Effect.orDie(liveRunners(expiration)), (live) =>
    live.length === 0 ? Effect.void : Effect.fail(
      new RunnerAddressRequired({
        message: `other cluster runners are live on this database (${live.map((r) => r.address).join(", ")}) and ` +
          "HERALD_RUNNER_ADDRESS is unset: set it on every node to where the other nodes reach that node (host:port)"
      })
    ))

/**
 * Whether the address refuses a TCP connection: nothing listens there, as
 * after the process was killed. A connection, or no answer within a second
 * (a loaded event loop, a host gone quiet), says nothing for sure.
 */
const refuses = (address: RunnerAddress.RunnerAddress) =>
  Effect.callback<boolean>((resume) => {
    const socket = net.connect({ host: address.host, port: address.port })
    const done = (refused: boolean) => {
      socket.destroy()
      resume(Effect.succeed(refused))
    }
    socket.once("connect", () => done(false))
    socket.once("error", (error: NodeJS.ErrnoException) => done(error.code === "ECONNREFUSED"))
    return Effect.sync(() => socket.destroy())
  }).pipe(Effect.timeoutOption(Duration.seconds(1)), Effect.map(Option.getOrElse(() => false)))

/**
 * A runner killed without unregistering stays listed, healthy, until its
 * heartbeat expires or another runner's health check catches it: a restarted
 * node would otherwise leave that runner's share of the shards, and their
 * timers, waiting for that. So at start the registered runners whose address
 * refuses connections are marked unhealthy, as a failed health check would
 * (a live one marked so by mistake is marked healthy again by the next health
 * check, and shard locks keep ownership single either way). One whose host is
 * gone holds its locks until PostgreSQL ends its session anyway
 * (`shardLockExpiration`), so waiting for it gains nothing.
 */
const markKilled = (self: RunnerAddress.RunnerAddress) =>
  Effect.gen(function*() {
    const storage = yield* RunnerStorage.RunnerStorage
    const runners = yield* storage.getRunners
    yield* Effect.forEach(runners, ([runner, healthy]) =>
      !healthy || Equal.equals(runner.address, self) ? Effect.void : Effect.flatMap(refuses(runner.address), (refused) =>
        !refused ? Effect.void : storage.setRunnerHealth(runner.address, false).pipe(
          Effect.andThen(Effect.logInfo(`cluster runner ${formatHostPort(runner.address)} is registered but refuses connections: marked unhealthy, its shards move`))
        )), { concurrency: "unbounded", discard: true })
  }).pipe(Effect.catchCause((cause) => Effect.logWarning("could not check the registered cluster runners", cause)))

/** The runner on the configured (or a free loopback) address, with `settings` over `runnerTimings`; needs a SqlClient and a Digest. */
export const runnerLayer = (addresses: ClusterConfigShape, settings: Settings) =>
  Layer.unwrap(Effect.gen(function*() {
    const listen = Option.getOrElse(Option.orElse(addresses.listenAddress, () => addresses.address), () => ({ host: "127.0.0.1", port: 0 }))
    const server = yield* NodeSocketServer.make({ host: listen.host, port: listen.port }).pipe(
      Effect.mapError((error) => listenFailure(listen, error))
    )
    const port = "port" in server.address ? server.address.port : listen.port
    const reached = Option.match(addresses.address, {
      onNone: () => ({ host: "127.0.0.1", port }),
      onSome: (a) => a.port === 0 ? { host: a.host, port } : a
    })
    const listening = { host: listen.host, port }
    yield* Option.isNone(addresses.address)
      ? Effect.logInfo(`runner ${formatHostPort(reached)}, alone; set HERALD_RUNNER_ADDRESS on every node to run several`)
      : Effect.logInfo(`runner ${formatHostPort(reached)}` +
        (formatHostPort(listening) === formatHostPort(reached) ? "" : ` (listening on ${formatHostPort(listening)})`))

    const self = RunnerAddress.make(reached.host, reached.port)
    const timings = { ...runnerTimings, ...settings }
    const config = ShardingConfig.layer({
      ...timings,
      runnerAddress: Option.some(self),
      runnerListenAddress: Option.some(RunnerAddress.make(listening.host, listening.port))
    })
    const clientProtocol = NodeClusterSocket.layerClientProtocol
    const health = RunnerHealth.layerPing.pipe(Layer.provide(Runners.layerRpc), Layer.provide(clientProtocol))
    const checks = Effect.andThen(
      Option.isNone(addresses.address) ? refuseBesideLiveRunners(timings.shardLockExpiration) : Effect.void,
      markKilled(self)
    )
    // After the storage is built: it creates `cluster_runners` on a new database.
    const runnerStorage = Layer.effectDiscard(checks).pipe(Layer.provideMerge(Layer.orDie(SqlRunnerStorage.layer)))
    // SocketRunner.layer without its own "Listening on" line: the line above says where.
    return RunnerServer.layerWithClients.pipe(
      Layer.provide(RpcServer.layerProtocolSocketServer),
      Layer.provide(Layer.succeed(SocketServer.SocketServer, server)),
      Layer.provide(clientProtocol),
      Layer.provide(health),
      Layer.provideMerge(SqlMessageStorage.layer),
      Layer.provide(runnerStorage),
      Layer.provide(config),
      Layer.provide(RpcSerialization.layerSchemaBinary())
    )
  }))
