/**
 * Plan and usage: every account is on the free plan (unlimited notifications
 * and devices); what is metered is reported, and the calling token's rate
 * limits are read from the limiter without taking from them.
 */
import { BillingOverview, Entitlement, RateLimitStatus } from "@herald/api"
import type { AgentPrincipal } from "@herald/api"
import { Clock, Context, Effect, Layer } from "effect"
import { BillingRepo } from "./BillingRepo.ts"
import { RateLimiter } from "./RateLimiter.ts"
import type { Decision } from "./RateLimiter.ts"

const status = (decision: Decision | undefined, now: number) =>
  decision === undefined
    ? new RateLimitStatus({ limit: null, remaining: null, resetAt: null })
    : new RateLimitStatus({
      limit: decision.limit,
      remaining: decision.remaining,
      resetAt: new Date(now + decision.resetMs).toISOString()
    })

export class Billing extends Context.Service<Billing, {
  readonly overview: (agent: AgentPrincipal) => Effect.Effect<BillingOverview>
}>()("herald/Billing") {
  static readonly layerNoDeps = Layer.effect(Billing, Effect.gen(function*() {
    const repo = yield* BillingRepo
    const limiter = yield* RateLimiter

    const overview = Effect.fn("Billing.overview")(function*(agent: AgentPrincipal) {
      const usage = yield* repo.usage(agent.userId)
      const now = yield* Clock.currentTimeMillis
      const limits = yield* limiter.peek(agent.tokenId, now)
      return new BillingOverview({
        plan: "free",
        entitlements: {
          notifications: new Entitlement({ limit: null, used: usage.notifications }),
          devices: new Entitlement({ limit: null, used: usage.devices })
        },
        rateLimits: { requests: status(limits.requests, now), sends: status(limits.sends, now) }
      })
    })

    return Billing.of({ overview })
  }))

  /** Needs `RateLimiter` and `SqlClient`. */
  static readonly layer = Billing.layerNoDeps.pipe(Layer.provide(BillingRepo.layer))
}
