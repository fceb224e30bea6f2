/**
 * Per-token rate limits (decisions.md): requests a minute over every Agent API
 * route, and a tighter budget for sending operations. Operator settings; `0`
 * turns a limit off (throughput benchmarks run with both off).
 */
import { Config, Context, Layer } from "effect"
import * as Env from "./Variable.ts"

export interface RateLimitConfigShape {
  /** Agent API requests per token per minute; 0 = off. */
  readonly requestsPerMinute: number
  /** Sending operations (notifications, prompts, live activity start/update) per token per minute; 0 = off. */
  readonly sendsPerMinute: number
}

export const rateLimitVariables = {
  requestsPerMinute: Env.integer("HERALD_RATE_LIMIT_PER_MINUTE", {
    default: 600,
    min: 0,
    zero: "turns it off",
    description: "Agent API requests per token per minute; `0` turns the limit off."
  }),
  sendsPerMinute: Env.integer("HERALD_SEND_LIMIT_PER_MINUTE", {
    default: 120,
    min: 0,
    zero: "turns it off",
    description:
      "Sending operations (notifications, prompts, live activity start/update) per token per minute, and inbound webhook deliveries per service per minute; `0` turns it off."
  })
}

export const rateLimitConfig: Config.Config<RateLimitConfigShape> = Env.configOf(rateLimitVariables)

export class RateLimitConfig extends Context.Service<RateLimitConfig, RateLimitConfigShape>()("herald/RateLimitConfig") {
  static readonly layer = Layer.effect(RateLimitConfig, rateLimitConfig)
}
