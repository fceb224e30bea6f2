/**
 * The behaviour of a watched service's actor (its protocol is
 * `WatchProtocol.ts`), keyed by a service id or a tunnel connector id: checks of one service run one at a time here, and the
 * database's conditional updates (WatchAlerts.ts) make a check delivered
 * twice, or on two nodes at once, move the watch once. Only the runtime's
 * layer graph imports this module.
 */
import { Duration, Effect, Semaphore } from "effect"
import { Entity } from "effect/cluster"
import { isConnectorId, WatchAlerts } from "./WatchAlerts.ts"
import { DeliveryWatch } from "./WatchProtocol.ts"

export const DeliveryWatchLive = DeliveryWatch.toLayer(
  Effect.gen(function*() {
    const { entityId: id } = yield* Entity.CurrentAddress
    const alerts = yield* WatchAlerts
    const lock = yield* Semaphore.make(1)
    return DeliveryWatch.of({
      Check: ({ payload }) => lock.withPermit(isConnectorId(id) ? alerts.checkConnector(id, payload) : alerts.check(id, payload))
    })
  }),
  { concurrency: "unbounded", maxIdleTime: Duration.minutes(2) }
)
