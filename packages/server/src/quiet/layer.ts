/**
 * Quiet hours: the Person API's rules and the summary of held pushes, over
 * their SQL. The settings cache the outbox reads (quiet/QuietGate.ts, one per
 * process) is the platform's.
 */
import { Layer } from "effect"
import { QuietHours } from "./QuietHours.ts"
import { QuietRepo } from "./QuietRepo.ts"
import { Summaries } from "./Summaries.ts"

export const QuietLayer = QuietHours.layerNoDeps.pipe(
  Layer.provideMerge(Summaries.layerNoDeps()),
  Layer.provideMerge(QuietRepo.layer)
)
