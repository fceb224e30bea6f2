/**
 * Records of the billing capability: "read-only plan, limits and remaining usage: free entitlements,
 * unlimited notifications and devices, per-minute rate limits". The spec names no record; these are
 * Herald's (decisions.md: the rate limits are operator settings, `0` turns one off).
 */
import { Schema } from "effect"
import { Timestamp } from "./Common.ts"

/** One per-token per-minute limit as it stands for the calling token. */
export class RateLimitStatus extends Schema.Class<RateLimitStatus>("RateLimitStatus")({
  /** Requests allowed per minute; null when the operator turned this limit off. */
  limit: Schema.NullOr(Schema.Natural),
  /** What remains of the current window; null when the limit is off. */
  remaining: Schema.NullOr(Schema.Natural),
  /** When the current window ends; null when the limit is off. */
  resetAt: Schema.NullOr(Timestamp)
}) {}

/** A metered entitlement: `limit` null means unlimited. */
export class Entitlement extends Schema.Class<Entitlement>("Entitlement")({
  limit: Schema.NullOr(Schema.Natural),
  used: Schema.Natural
}) {}

/** GET /billing: the plan, its entitlements and the calling token's rate limits. */
export class BillingOverview extends Schema.Class<BillingOverview>("BillingOverview")({
  plan: Schema.Literal("free"),
  entitlements: Schema.Struct({
    /** Notifications sent by the account this calendar month (UTC); unlimited on the free plan. */
    notifications: Entitlement,
    /** Active devices of the account; unlimited on the free plan. */
    devices: Entitlement
  }),
  rateLimits: Schema.Struct({
    /** Every Agent API request of this token. */
    requests: RateLimitStatus,
    /** Sending operations of this token (notifications, prompts, live activity start/update). */
    sends: RateLimitStatus
  })
}) {}
