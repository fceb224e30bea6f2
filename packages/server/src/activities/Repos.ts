/** The live-activity repos, as one layer: lifecycle, operation queue and read model. */
import { Layer } from "effect"
import { LifecycleRepo } from "./LifecycleRepo.ts"
import { QueueRepo } from "./QueueRepo.ts"
import { ReadModelRepo } from "./ReadModelRepo.ts"

export const ActivitiesRepos = Layer.mergeAll(LifecycleRepo.layer, QueueRepo.layer, ReadModelRepo.layer)
