/**
 * Pacing of live-activity pushes: how often a device may get a routine
 * update of one activity, and a start of any activity.
 */
import { Config, Context, Duration, Layer } from "effect"
import * as Env from "./Variable.ts"

export interface ActivityConfigShape {
  /** Routine (priority 5) updates per device per activity: at most one per interval. */
  readonly updateInterval: Duration.Duration
  /** Starts per device: at most one per interval, across activities. */
  readonly startInterval: Duration.Duration
}

export const activityVariables = {
  updateMs: Env.integer("HERALD_ACTIVITY_UPDATE_INTERVAL_MS", {
    default: 1000,
    min: 0,
    zero: "paces nothing",
    description: "Routine live-activity updates per device per activity: at most one per this many milliseconds."
  }),
  startMs: Env.integer("HERALD_ACTIVITY_START_INTERVAL_MS", {
    default: 1000,
    min: 0,
    zero: "paces nothing",
    description: "Live-activity starts per device: at most one per this many milliseconds."
  })
}

export const activityConfig: Config.Config<ActivityConfigShape> = Env.configOf(activityVariables).pipe(Config.map((c) => ({
  updateInterval: Duration.millis(c.updateMs),
  startInterval: Duration.millis(c.startMs)
})))

export class ActivityConfig extends Context.Service<ActivityConfig, ActivityConfigShape>()("herald/ActivityConfig") {
  static readonly layer = Layer.effect(ActivityConfig, activityConfig)
}
