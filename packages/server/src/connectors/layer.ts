/** The connector services over their SQL and the server's sealing key. */
import { Layer } from "effect"
import { ServerSecrets } from "../db/ServerSecrets.ts"
import { Callbacks } from "./Callbacks.ts"
import { Connectors } from "./Connectors.ts"
import { ConnectorsRepo } from "./ConnectorsRepo.ts"
import { Passes } from "./Passes.ts"
import { PendingDeliveries } from "./PendingDeliveries.ts"

export const ConnectorsLayer = Layer.mergeAll(Connectors.layerNoDeps, Passes.layer, PendingDeliveries.layer).pipe(
  Layer.provideMerge(Callbacks.layerNoDeps),
  Layer.provideMerge(Layer.mergeAll(ConnectorsRepo.layer, ServerSecrets.layer))
)
