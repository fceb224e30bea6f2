/** The outbox on a test database with the sandbox provider, and a push to queue on it: shared by the outbox tests. */
import { ConfigProvider, Duration, Layer } from "effect"
import type { SqlClient } from "effect/sql"
import { OutboxConfig } from "../../src/config/OutboxConfig.ts"
import type { OutboxConfigShape } from "../../src/config/OutboxConfig.ts"
import { alertMessage } from "../../src/push/Alerts.ts"
import { Outbox } from "../../src/push/Outbox.ts"
import type { NewPush } from "../../src/push/Outbox.ts"
import { OutboxRepo } from "../../src/push/OutboxRepo.ts"
import { PushGateway } from "../../src/push/PushGateway.ts"
import { SandboxRepo } from "../../src/push/SandboxRepo.ts"
import { QuietGate } from "../../src/quiet/QuietGate.ts"
import { TestDatabase, uniqueId } from "./support.ts"

/**
 * The outbox (no workers: a test adds `OutboxWorkers` on top, or runs the drain itself), its settings
 * with `config` over quick test defaults, a gateway (the default one: the sandbox) and the database.
 */
export const outboxLayer = (
  config: Partial<OutboxConfigShape> = {},
  gateway: Layer.Layer<PushGateway, unknown, SandboxRepo | SqlClient.SqlClient> = PushGateway.layer.pipe(Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({}))))
) =>
  Outbox.layerNoDeps.pipe(
    Layer.provideMerge(gateway),
    Layer.provideMerge(SandboxRepo.layer),
    Layer.provideMerge(Layer.mergeAll(
      Layer.succeed(OutboxConfig, {
        concurrency: 8,
        batchSize: 10,
        maxAttempts: 3,
        pollInterval: Duration.millis(50),
        requestWait: Duration.seconds(5),
        staleClaim: Duration.seconds(30),
        paused: false,
        ...config
      }),
      OutboxRepo.layer,
      QuietGate.layer
    )),
    Layer.provideMerge(TestDatabase)
  )

/** A "Build finished" alert for `deviceId`, as a notification would queue it. */
export const alertPush = (deviceId: string, itemId = uniqueId("anot")): NewPush => ({
  userId: "usr_test",
  deviceId,
  origin: "notification",
  itemId,
  purpose: "alert",
  message: alertMessage({
    ref: `notification:${itemId}`,
    collapseId: itemId,
    title: "Build finished",
    body: "All green",
    url: null,
    imageUrl: null,
    threadId: null
  })
})
