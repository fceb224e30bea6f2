/**
 * Pacing of live-activity pushes: how often a device may get a routine
 * update of one activity, and a start of any activity.
 */
import { Config, Context, Duration, Layer } from "effect"

export interface ActivityConfigShape {
  /** Routine (priority 5) updates per device per activity: at most one per interval. */
  readonly updateInterval: Duration.Duration
  /** Starts per device: at most one per interval, across activities. */
  readonly startInterval: Duration.Duration
}

export const activityConfig: Config.Config<ActivityConfigShape> = Config.all({
  updateMs: Config.Int("HERALD_ACTIVITY_UPDATE_INTERVAL_MS").pipe(Config.withDefault(1000)),
  startMs: Config.Int("HERALD_ACTIVITY_START_INTERVAL_MS").pipe(Config.withDefault(1000))
}).pipe(Config.map((c) => ({
  updateInterval: Duration.millis(Math.max(0, c.updateMs)),
  startInterval: Duration.millis(Math.max(0, c.startMs))
})))

export class ActivityConfig extends Context.Service<ActivityConfig, ActivityConfigShape>()("herald/ActivityConfig") {
  static readonly layer = Layer.effect(ActivityConfig, activityConfig)
}
