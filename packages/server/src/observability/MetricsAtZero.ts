/**
 * Metrics a scrape lists from the start. A metric enters the registry on its
 * first touch, so a counter nobody has bumped yet (no live activity
 * superseded, no push sent) was missing from `/metrics` until its first event:
 * a dashboard or an alert on it saw "no data" rather than 0. Each capability
 * declares its metrics in one module; this layer reads each once at start
 * (`Metric.value` registers the series without changing it: a counter or a
 * histogram at 0, a gauge left to its first sample).
 */
import { Effect, Layer, Metric } from "effect"
import { supersededTotal } from "../activities/Metrics.ts"
import { sendDuration, sendsTotal } from "../push/PushGateway.ts"

/** A layer that registers the given metrics at their initial value. */
export const registerAtZero = (metrics: ReadonlyArray<Metric.Metric<number, unknown>>) =>
  Layer.effectDiscard(Effect.forEach(metrics, (metric) => Metric.value(metric), { discard: true }))

/** The metrics that otherwise appear only after their first event. */
export const declaredMetrics: ReadonlyArray<Metric.Metric<number, unknown>> = [supersededTotal, sendsTotal, sendDuration]

export const MetricsAtZeroLayer = registerAtZero(declaredMetrics)
