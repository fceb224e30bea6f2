/**
 * On-call timing: the operator's multiplier on escalation delays, so an
 * end-to-end test or a benchmark can run a one-minute step in seconds
 * (like `HERALD_RETRY_TIME_SCALE` for reply-webhook retries).
 */
import { Config, Context, Duration, Layer } from "effect"
import * as Env from "./Variable.ts"

export interface OncallConfigShape {
  /** Multiplies every escalation step's `afterMinutes` (default 1). */
  readonly timeScale: number
  /** When a step of `afterMinutes` is due, counted from the page's creation, at this scale. */
  readonly stepDelay: (afterMinutes: number) => Duration.Duration
}

export const oncallVariables = {
  timeScale: Env.number("HERALD_ONCALL_TIME_SCALE", {
    default: 1,
    positive: true,
    description: "Multiplies the delay of every on-call escalation step (e.g. `0.05` runs a one-minute step after 3 s, " +
      "in tests and benchmarks)."
  })
}

export const makeOncallConfig = (timeScale: number): OncallConfigShape => {
  const scale = timeScale > 0 ? timeScale : 1
  return {
    timeScale: scale,
    stepDelay: (afterMinutes) => Duration.millis(Math.round(afterMinutes * 60_000 * scale))
  }
}

export const oncallConfig: Config.Config<OncallConfigShape> = Env.configOf(oncallVariables).pipe(
  Config.map((c) => makeOncallConfig(c.timeScale))
)

export class OncallConfig extends Context.Service<OncallConfig, OncallConfigShape>()("herald/OncallConfig") {
  static readonly layer = Layer.effect(OncallConfig, oncallConfig)
}
