/**
 * Quiet hours: the Person API's rules and the summary of held pushes, over the
 * per-process settings cache (the same `QuietGate.layer` the outbox uses:
 * one cache per process) and their SQL. Needs the outbox and device targeting.
 */
import { Layer } from "effect"
import { QuietGate } from "./QuietGate.ts"
import { QuietHours } from "./QuietHours.ts"
import { QuietRepo } from "./Repo.ts"
import { Summaries } from "./Summaries.ts"

export const QuietLayer = QuietHours.layerNoDeps.pipe(
  Layer.provideMerge(Summaries.layerNoDeps()),
  Layer.provideMerge(Layer.mergeAll(QuietGate.layer, QuietRepo.layer))
)
