import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { BillingOverview } from "../domain/Billing.ts"
import { agentOperation } from "../Operation.ts"
import { AgentAuth } from "../Security.ts"

export class BillingGroup extends HttpApiGroup.make("billing")
  .add(
    HttpApiEndpoint.get("get", "/billing", { success: BillingOverview }).pipe(agentOperation({
      summary: "Plan, usage and rate limits",
      description: "Read-only: the free plan (unlimited notifications and devices; `used` counts this month's " +
        "notifications and the active devices) and the calling token's per-minute rate limits with what remains of " +
        "each; the send limit is one budget shared by all sending operations (notifications, prompts, live activity " +
        "starts and updates). Limits are operator settings (`HERALD_RATE_LIMIT_PER_MINUTE`, `HERALD_SEND_LIMIT_PER_MINUTE`); a limit " +
        "that is off shows `limit: null`. Over a limit, requests answer 429 `RATE_LIMITED` with `Retry-After` and " +
        "`RateLimit-Limit` / `RateLimit-Remaining` / `RateLimit-Reset` headers.",
      scopes: ["billing:read"]
    }))
  )
  .middleware(AgentAuth)
{}
