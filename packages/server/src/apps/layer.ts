/** Web apps (apps/): the service over its SQL, and the app-access check other capabilities read. */
import { Layer } from "effect"
import { AppAccess } from "./AppAccess.ts"
import { Apps } from "./Apps.ts"
import { AppsRepo } from "./AppsRepo.ts"

export const AppsLayer = Layer.merge(Apps.layerNoDeps.pipe(Layer.provide(AppsRepo.layer)), AppAccess.layer)
