/**
 * The actor runtime: `effect/cluster` sharding on this process, with entity
 * mailboxes and durable timers (`DeliverAt` messages) stored in the database.
 *
 * Every process runs all shards (runner storage in memory): an entity's state
 * of record is its database row, changed only by conditional updates, so two
 * processes on one database never apply a change twice. Timers are polled
 * every 500 ms, which keeps expiry within a second of its deadline.
 */
import { NodeCrypto } from "@effect/platform-node"
import { Duration, Layer } from "effect"
import { SingleRunner } from "effect/cluster"

export const ClusterLayer = SingleRunner.layer({
  runnerStorage: "memory",
  shardingConfig: {
    entityMessagePollInterval: Duration.millis(500),
    entityReplyPollInterval: Duration.millis(100)
  }
}).pipe(Layer.provide(NodeCrypto.layerDigest))
