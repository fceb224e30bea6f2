/**
 * Metrics a scrape lists from the start. A metric enters the registry on its
 * first touch, so a counter nobody has bumped yet (no live activity
 * superseded, no push sent) was missing from `/metrics` until its first event:
 * a dashboard or an alert on it saw "no data" rather than 0. Each capability
 * (and the platform) exports the list of its declared metrics; the runtime
 * registers them all (runtime/Server.ts). This module imports no capability.
 * `Metric.value` registers the series without changing it: a counter or a
 * histogram at 0, a gauge left to its first sample.
 */
import { Effect, Layer, Metric } from "effect"

/** A metric some capability declares, to be listed from the start. */
export type DeclaredMetric = Metric.Metric<number, unknown>

/** A layer that registers the given metrics at their initial value. */
export const registerAtZero = (metrics: ReadonlyArray<DeclaredMetric>) =>
  Layer.effectDiscard(Effect.forEach(metrics, (metric) => Metric.value(metric), { discard: true }))
