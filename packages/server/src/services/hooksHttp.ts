/**
 * Inbound webhook deliveries. The handler takes the raw request: a sender's
 * body may be any JSON, a form or any textual type, which the framework's
 * payload decoders (by exact media type) would refuse; Services.deliver reads
 * it by the service's format (services/inbound/). The contract still declares
 * the accepted bodies, for the OpenAPI and the typed client.
 */
import { HooksApi, InboundAccepted, RateLimited, UnsupportedMediaType } from "@herald/api"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { reportRateLimit, seconds } from "../billing/RateLimitHeaders.ts"
import { mediaOf } from "./inbound/Body.ts"
import { Services } from "./Services.ts"

const binary = new UnsupportedMediaType({
  error: "Send the delivery as JSON, application/x-www-form-urlencoded or text (docs/inbound-webhooks.md)."
})

export const InboundHandlers = HttpApiBuilder.group(HooksApi, "inbound", Effect.fn(function*(handlers) {
  const services = yield* Services
  return handlers.handleRaw("deliver", ({ params, request }) =>
    Effect.gen(function*() {
      const contentType = request.headers["content-type"]
      // A binary body is refused before a byte of it is read.
      if (mediaOf(contentType) === "binary") return yield* binary
      // Read as the framework's decoders read (a body over the route's limit is their 413).
      const text = yield* Effect.orDie(request.text)
      return yield* services.deliver(params.token, { contentType, headers: request.headers, text })
    }).pipe(
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
