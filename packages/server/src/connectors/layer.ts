/**
 * Connectors (connectors/) over their SQL; the server's sealing key is the
 * platform's. Their heartbeat watch (watch/ConnectorWatch.ts, stateless: its
 * timers are the cluster's) is provided inside and read by the handlers.
 */
import { Layer } from "effect"
import { ConnectorWatch } from "../watch/ConnectorWatch.ts"
import { Callbacks } from "./Callbacks.ts"
import { Connectors } from "./Connectors.ts"
import { ConnectorsRepo } from "./ConnectorsRepo.ts"
import { Passes } from "./Passes.ts"
import { PendingDeliveries } from "./PendingDeliveries.ts"

export const ConnectorsLayer = Layer.mergeAll(Connectors.layerNoDeps, Passes.layer, PendingDeliveries.layer).pipe(
  Layer.provideMerge(Callbacks.layerNoDeps),
  Layer.provideMerge(ConnectorsRepo.layer),
  Layer.provideMerge(ConnectorWatch.layer)
)
