/** Mini-apps (miniApps/): packages (publish, reads, the signing keys) and their review, over their SQL. */
import { Layer } from "effect"
import { Packages } from "./Packages.ts"
import { PackagesRepo } from "./PackagesRepo.ts"
import { Review } from "./Review.ts"
import { Signing } from "./Signing.ts"

export const MiniAppsLayer = Layer.merge(Packages.layer, Review.layer).pipe(
  Layer.provideMerge(Layer.mergeAll(PackagesRepo.layer, Signing.layer))
)
