/**
 * The actor runtime: `effect/cluster` sharding on this process, with entity
 * mailboxes and durable timers (`DeliverAt` messages) stored in the database.
 *
 * Every process runs all shards (runner storage in memory): an entity's state
 * of record is its database row, changed only by conditional updates, so two
 * processes on one database never apply a change twice. Timers are polled
 * every 500 ms, which keeps expiry within a second of its deadline.
 */
import * as NodeCrypto from "@effect/platform-node/NodeCrypto"
import { Context, Duration, Effect, Layer } from "effect"
import { SingleRunner } from "effect/cluster"
import type { ShardingConfig } from "effect/cluster"

/**
 * Sharding settings over the ones below, read when the runtime is built: lets
 * a test bring the runtime to its limits for real (a resident-entity cap of
 * one) and see what a caller is answered (cluster/EntityCalls.ts).
 */
export const ClusterTuning = Context.Reference<Partial<ShardingConfig.ShardingConfig["Service"]>>("herald/ClusterTuning", {
  defaultValue: () => ({})
})

export const ClusterLayer = Layer.unwrap(Effect.map(Effect.service(ClusterTuning), (tuning) =>
  SingleRunner.layer({
    runnerStorage: "memory",
    shardingConfig: {
      entityMessagePollInterval: Duration.millis(500),
      entityReplyPollInterval: Duration.millis(100),
      ...tuning
    }
  }))).pipe(Layer.provide(NodeCrypto.layerDigest))
