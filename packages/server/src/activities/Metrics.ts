/**
 * The live-activity metrics. Defined here, in one module, so the process can
 * register each at 0 from the start (a scrape before the first event still
 * lists it).
 */
import { Metric } from "effect"

/** Unsent routine snapshots replaced by newer ones or dropped by an end: how much pacing saved the devices (and the providers). */
export const supersededTotal = Metric.counter("herald_live_activity_superseded_total", {
  description: "Unsent routine live-activity snapshots superseded by a newer snapshot or an end.",
  incremental: true
})
