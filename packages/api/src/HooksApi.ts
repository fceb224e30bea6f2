/**
 * Inbound webhook deliveries: `POST {webhookUrl}`. No bearer token: the URL's
 * `hlw_…` token is the credential. A separate API (prefix `/hooks`) because it
 * shares nothing with the Agent API's authentication.
 */
import { Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { ImageUrl, TapUrl } from "./domain/Common.ts"
import { errorSchemasAsSent, NotFound, RateLimited } from "./errors.ts"
import { WebhookToken } from "./Params.ts"
import { RequestErrors } from "./Security.ts"

/** decisions.md: JSON `{title?, body*, imageUrl?, url?}`. */
export const InboundJson = Schema.Struct({
  title: Schema.optionalKey(Schema.NullOr(Schema.String.check(Schema.isMaxLength(200)))),
  body: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(10_000)),
  imageUrl: Schema.optionalKey(Schema.NullOr(ImageUrl)),
  url: Schema.optionalKey(Schema.NullOr(TapUrl))
}).annotate({ identifier: "InboundDelivery" })
export type InboundJson = typeof InboundJson.Type

/** decisions.md: a `text/plain` body is the notification's body. */
export const InboundText = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(10_000)).pipe(
  HttpApiSchema.asText()
)

export class InboundAccepted extends Schema.Class<InboundAccepted>("InboundAccepted")({
  ok: Schema.Literal(true),
  eventId: Schema.String
}) {}

export class InboundGroup extends HttpApiGroup.make("inbound")
  .add(
    HttpApiEndpoint.post("deliver", "/:token", {
      params: { token: WebhookToken },
      payload: [InboundJson, InboundText],
      success: InboundAccepted.pipe(HttpApiSchema.status(202)),
      error: [NotFound, RateLimited]
    }).annotateMerge(OpenApi.annotations({
      summary: "Deliver to a webhook service",
      description: "Posts a notification to the service whose webhook URL this is: JSON `{title?, body*, imageUrl?, " +
        "url?}` or a `text/plain` body (the text is the body); the request at most 64 KiB (413 beyond), `body` at most " +
        "10,000 characters and `title` 200 (400 beyond). It becomes an Event and is pushed to " +
        "the service creator's devices (and, when shared, every accepted family member's). 202 `{ok, eventId}`; an " +
        "unknown or rotated token answers 404. Each service takes at most the send limit a minute " +
        "(`HERALD_SEND_LIMIT_PER_MINUTE`, 120 by default): over it, 429 `RATE_LIMITED` with `Retry-After`; every " +
        "counted delivery carries `RateLimit-*` headers."
    }))
  )
{}

export class HooksApi extends HttpApi.make("hooks")
  .add(InboundGroup)
  .middleware(RequestErrors)
  .annotate(HttpApi.PayloadParseOptions, { onExcessProperty: "error", errors: "all" })
  .annotate(HttpApi.SuccessParseOptions, { disableChecks: true })
  .prefix("/hooks")
  .annotateMerge(OpenApi.annotations({
    title: "Herald inbound webhooks",
    version: "1.0.0",
    transform: errorSchemasAsSent,
    description: "Where webhook services receive deliveries. The URL is the credential; no bearer token."
  }))
{}
