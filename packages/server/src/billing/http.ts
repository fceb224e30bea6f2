/** Agent API handler of billing. */
import { AgentApi, CurrentAgent } from "@herald/api"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Billing } from "./Billing.ts"

export const BillingHandlers = HttpApiBuilder.group(AgentApi, "billing", Effect.fn(function*(handlers) {
  const billing = yield* Billing
  return handlers.handle("get", () => Effect.flatMap(CurrentAgent, billing.overview))
}))
