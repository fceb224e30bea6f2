/**
 * Per-token rate limits (decisions.md): requests a minute over every Agent API
 * route, and a tighter budget for sending operations. Operator settings; `0`
 * turns a limit off (throughput benchmarks run with both off).
 */
import { Config, Context, Layer } from "effect"

export interface RateLimitConfigShape {
  /** Agent API requests per token per minute; 0 = off. */
  readonly requestsPerMinute: number
  /** Sending operations (notifications, prompts, live activity start/update) per token per minute; 0 = off. */
  readonly sendsPerMinute: number
}

export const rateLimitConfig: Config.Config<RateLimitConfigShape> = Config.all({
  requestsPerMinute: Config.Int("HERALD_RATE_LIMIT_PER_MINUTE").pipe(Config.withDefault(600)),
  sendsPerMinute: Config.Int("HERALD_SEND_LIMIT_PER_MINUTE").pipe(Config.withDefault(120))
}).pipe(Config.map((c) => ({ requestsPerMinute: Math.max(0, c.requestsPerMinute), sendsPerMinute: Math.max(0, c.sendsPerMinute) })))

export class RateLimitConfig extends Context.Service<RateLimitConfig, RateLimitConfigShape>()("herald/RateLimitConfig") {
  static readonly layer = Layer.effect(RateLimitConfig, rateLimitConfig)
}
