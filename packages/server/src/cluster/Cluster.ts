/**
 * The actor runtime: `effect/cluster` sharding, with entity mailboxes and
 * durable timers (`DeliverAt` messages) stored in the database.
 *
 * On PostgreSQL every `herald serve` is a runner (Runner.ts): the shards are
 * spread over the live runners, each entity lives on exactly one of them and
 * is reached from any node, and a dead runner's shards move to the others.
 * On the embedded database there is one process (db/Embedded.ts refuses a
 * second), which holds every shard: a single runner, with no address and no
 * runner registry. Either way timers are polled every 500 ms, which keeps
 * expiry within a second of its deadline, and replies every 100 ms.
 *
 * Built once per process: a service of the platform (runtime/Platform.ts),
 * which every capability layer whose entities live here is built on.
 */
import * as NodeCrypto from "@effect/platform-node/NodeCrypto"
import { Context, Duration, Effect, Layer, Option } from "effect"
import { RunnerHealth, Runners, RunnerStorage, Sharding, ShardingConfig, SqlMessageStorage } from "effect/cluster"
import { AppConfig } from "../config/AppConfig.ts"
import { ClusterConfig } from "../config/ClusterConfig.ts"
import { describeTarget } from "../db/Database.ts"

type Settings = Partial<ShardingConfig.ShardingConfig["Service"]>

/**
 * Sharding settings over the ones below, read when the runtime is built: lets
 * a test bring the runtime to its limits for real (a resident-entity cap of
 * one) and see what a caller is answered (cluster/EntityCalls.ts).
 */
export const ClusterTuning = Context.Reference<Settings>("herald/ClusterTuning", {
  defaultValue: () => ({})
})

/**
 * Which runtime to build. `auto` (the default): a runner on PostgreSQL, a
 * single runner on the embedded database, as `DATABASE_URL` says. In-process
 * tests configure no `DATABASE_URL`, so they run a single runner (timers
 * driven by their clock alone) whatever database they use; one that needs
 * real runners pins `runner` (PostgreSQL only: the embedded database's one
 * session cannot tell runners' shard locks apart).
 */
export const ClusterMode = Context.Reference<"auto" | "runner" | "single">("herald/ClusterMode", {
  defaultValue: () => "auto"
})

/** Both runtimes: stored messages (timers among them) polled every 500 ms, stored replies every 100 ms. */
const polling = {
  entityMessagePollInterval: Duration.millis(500),
  entityReplyPollInterval: Duration.millis(100)
} satisfies Settings

/** `SingleRunner.layer({ runnerStorage: "memory" })`, with Herald's settings rather than the environment's. */
const singleRunner = (settings: Settings) =>
  Sharding.layer.pipe(
    Layer.provideMerge(Runners.layerNoop),
    Layer.provideMerge(SqlMessageStorage.layer),
    Layer.provide([RunnerStorage.layerMemory, RunnerHealth.layerNoop]),
    Layer.provide(ShardingConfig.layer(settings))
  )

export const ClusterLayer = Layer.unwrap(Effect.gen(function*() {
  const settings = { ...polling, ...(yield* ClusterTuning) }
  const mode = yield* ClusterMode
  const addresses = yield* ClusterConfig
  const runner = mode === "auto" ? describeTarget(yield* AppConfig).kind === "postgres" : mode === "runner"
  if (!runner) {
    if (mode === "auto" && Option.isSome(addresses.address)) {
      yield* Effect.logWarning("HERALD_RUNNER_ADDRESS is ignored: the embedded database is served by this one process")
    }
    return singleRunner(settings)
  }
  // Loaded only on PostgreSQL: the embedded database never needs the socket transport.
  const { runnerLayer } = yield* Effect.promise(() => import("./Runner.ts"))
  return runnerLayer(addresses, settings)
})).pipe(Layer.provide([NodeCrypto.layerDigest, AppConfig.layer, ClusterConfig.layer]))
