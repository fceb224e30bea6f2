/**
 * Live activities (activities/): the service and its entity on the platform's
 * cluster, over their SQL. The resident actors and the device pacing are the
 * platform's (one per process).
 */
import { Layer, Metric } from "effect"
import { LiveActivityLive } from "./ActivityBehaviour.ts"
import { LiveActivities } from "./LiveActivities.ts"
import { supersededTotal } from "./Metrics.ts"
import { ActivitiesRepos } from "./Repos.ts"

export const ActivitiesLayer = LiveActivityLive.pipe(
  Layer.provideMerge(LiveActivities.layerNoDeps),
  Layer.provideMerge(ActivitiesRepos)
)

/** The metrics listed from the start (observability/MetricsAtZero.ts). */
export const activityMetrics: ReadonlyArray<Metric.Metric<number, unknown>> = [supersededTotal]
