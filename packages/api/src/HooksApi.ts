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

/** decisions.md: JSON `{title?, body*, imageUrl?, url?}`; other fields are kept on the Event's `payload`. */
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

/** A sender's own JSON (Grafana, Alertmanager, GitHub, GitLab, Uptime Kuma, Sentry, or any JSON a template maps). */
export const SenderJson = Schema.Record(Schema.String, Schema.Unknown).annotate({
  identifier: "SenderDelivery",
  description: "Any JSON object: a sender's documented payload, read by the service's format or as detected."
})

/** `application/x-www-form-urlencoded` (`curl -d`): `title`, `message` (or `body`), `url`, `priority` fields. */
export const InboundForm = Schema.Record(Schema.String, Schema.String).pipe(HttpApiSchema.asFormUrlEncoded()).annotate({
  identifier: "InboundForm"
})

export class InboundAccepted extends Schema.Class<InboundAccepted>("InboundAccepted")({
  ok: Schema.Literal(true),
  eventId: Schema.String
}) {}

export class InboundGroup extends HttpApiGroup.make("inbound")
  .add(
    HttpApiEndpoint.post("deliver", "/:token", {
      params: { token: WebhookToken },
      payload: [InboundJson, SenderJson, InboundText, InboundForm],
      success: InboundAccepted.pipe(HttpApiSchema.status(202)),
      error: [NotFound, RateLimited]
    }).annotateMerge(OpenApi.annotations({
      summary: "Deliver to a webhook service",
      description: "Posts a notification to the service whose webhook URL this is. What the body is read as is " +
        "the service's `format`, or, when it has none, detected: a `X-GitHub-Event` header is `github`, " +
        "`X-Gitlab-Event` `gitlab`, `Sentry-Hook-Resource` `sentry`; an `application/x-www-form-urlencoded` body " +
        "`form` (`title`, `message` or `body`, `url`, `priority`; a body that is not key=value pairs, as `curl -d " +
        "'disk full'` sends, is the message itself; JSON sent as a form is read as JSON); JSON with `alerts` and " +
        "`receiver` is `grafana` (with `orgId` or version 1) or `alertmanager`; with `heartbeat` and `monitor` `uptime-kuma`; empty or carrying `title`, " +
        "`body`, `imageUrl` or `url` the spec's `{title?, body*, imageUrl?, url?}` (`herald`); any other JSON " +
        "`json` (the service's template, else the common fields `message`, `text`, `description`…); `text/*` and " +
        "other textual types (XML, YAML…) `text`. A binary type answers 415 `UNSUPPORTED_MEDIA_TYPE`. Fields a " +
        "format does not read are kept on the Event's `payload`, never refused. The request is at most 1 MiB " +
        "(413 beyond). The spec's JSON, `text` and `form` bodies are checked as the spec says: `body` 1–10,000 " +
        "characters, `title` at most 200, `imageUrl` an http(s) URL, `url` a link (400 `VALIDATION_FAILED` " +
        "otherwise); a sender's longer texts are cut to those lengths instead. A delivery with no message text " +
        "at all is 400 `VALIDATION_FAILED`. The sender's severity becomes the push's `priority` (`critical`, " +
        "`high`, `normal`, `low`; table in docs/inbound-webhooks.md). An alert's identity (Grafana's or " +
        "Alertmanager's group key, Uptime Kuma's monitor, Sentry's issue or metric alert) is the Event's " +
        "`alertKey`: its firing pushes share one collapse id, so a repeat replaces the last on the phone, and a " +
        "`resolved` delivery withdraws them from every device (the ones still queued are dropped) and is itself " +
        "pushed quietly (`low`). Each delivery becomes an Event and an inbox item, and is pushed to the service " +
        "creator's devices (and, when shared, every accepted family member's). 202 `{ok, eventId}`; an unknown " +
        "or rotated token answers 404. Each service takes at most the send limit a minute " +
        "(`HERALD_SEND_LIMIT_PER_MINUTE`, 120 by default): over it, 429 `RATE_LIMITED` with `Retry-After`; every " +
        "counted delivery carries `RateLimit-*` headers."
    }))
  )
{}

export class HooksApi extends HttpApi.make("hooks")
  .add(InboundGroup)
  .middleware(RequestErrors)
  .annotate(HttpApi.PayloadParseOptions, { errors: "all" })
  .annotate(HttpApi.SuccessParseOptions, { disableChecks: true })
  .prefix("/hooks")
  .annotateMerge(OpenApi.annotations({
    title: "Herald inbound webhooks",
    version: "1.0.0",
    transform: errorSchemasAsSent,
    description: "Where webhook services receive deliveries. The URL is the credential; no bearer token."
  }))
{}
