/**
 * The dead-man's switch (watch/): one actor per watched service or connector
 * on the platform's cluster, its settings and alerts, over their SQL. A silent
 * service's alert can page: built over the on-call capability and passed on
 * with it (on-call appears in the graph here only).
 */
import { Layer } from "effect"
import { GroupsRepo } from "../oncall/GroupsRepo.ts"
import { OncallLayer } from "../oncall/layer.ts"
import { ConnectorWatch } from "./ConnectorWatch.ts"
import { ConnectorWatchRepo } from "./ConnectorWatchRepo.ts"
import { WatchAlerts } from "./WatchAlerts.ts"
import { DeliveryWatchLive } from "./WatchBehaviour.ts"
import { WatchRepo } from "./WatchRepo.ts"
import { WatchSettings } from "./WatchSettings.ts"

export const WatchLayer = DeliveryWatchLive.pipe(
  Layer.provideMerge(WatchAlerts.layerNoDeps),
  Layer.provideMerge(Layer.mergeAll(ConnectorWatch.layerNoDeps, WatchSettings.layerNoDeps)),
  Layer.provideMerge(Layer.mergeAll(WatchRepo.layer, ConnectorWatchRepo.layer, GroupsRepo.layer)),
  Layer.provideMerge(OncallLayer)
)
