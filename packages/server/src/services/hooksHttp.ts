/** Inbound webhook deliveries: JSON `{title?, body, imageUrl?, url?}` or a text/plain body. */
import { HooksApi, InboundAccepted } from "@herald/api"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Services } from "./Services.ts"

export const InboundHandlers = HttpApiBuilder.group(HooksApi, "inbound", Effect.fn(function*(handlers) {
  const services = yield* Services
  return handlers.handle("deliver", ({ params, payload }) =>
    services.deliver(params.token, typeof payload === "string" ? { body: payload } : payload).pipe(
      Effect.map(({ eventId }) => new InboundAccepted({ ok: true, eventId }))
    ))
}))
