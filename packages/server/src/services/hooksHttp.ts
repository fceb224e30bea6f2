/** Inbound webhook deliveries: JSON `{title?, body, imageUrl?, url?}` or a text/plain body. */
import { HooksApi, InboundAccepted, RateLimited } from "@herald/api"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { reportRateLimit, seconds } from "../billing/RateLimitHeaders.ts"
import { Services } from "./Services.ts"

export const InboundHandlers = HttpApiBuilder.group(HooksApi, "inbound", Effect.fn(function*(handlers) {
  const services = yield* Services
  return handlers.handle("deliver", ({ params, payload }) =>
    services.deliver(params.token, typeof payload === "string" ? { body: payload } : payload).pipe(
      Effect.tap(({ rateLimit }) => rateLimit === undefined ? Effect.void : reportRateLimit(rateLimit)),
      Effect.map(({ eventId }) => new InboundAccepted({ ok: true, eventId })),
      Effect.catchTag("DeliveryThrottled", ({ decision }) =>
        Effect.andThen(
          reportRateLimit(decision),
          Effect.fail(new RateLimited({
            error: `Rate limit exceeded: ${decision.limit} deliveries a minute for this webhook service. ` +
              `Retry after ${seconds(decision.retryAfterMs)} s.`
          }))
        ))
    ))
}))
