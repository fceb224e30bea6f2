/**
 * Inbound services (services/): the service over its repo, with the watch
 * settings of webhook services (watch/WatchSettings.ts, stateless), which the
 * handlers read too (each record's `watch`).
 */
import { Layer } from "effect"
import { WatchSettings } from "../watch/WatchSettings.ts"
import { ServicesRepo } from "./ServicesRepo.ts"
import { Services } from "./Services.ts"

export const ServicesLayer = Services.layerNoDeps.pipe(
  Layer.provide(ServicesRepo.layer),
  Layer.provideMerge(WatchSettings.layer)
)
