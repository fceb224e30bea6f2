import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { Ok } from "../domain/Common.ts"
import { connectorUrlProblem } from "../domain/ConnectorPaths.ts"
import {
  ReplyEventType,
  ReplyWebhook,
  ReplyWebhookCreated,
  ReplyWebhookDelivery,
  ReplyWebhookPreset,
  WebhookHeaderList
} from "../domain/ReplyWebhooks.ts"
import { LimitReached, NotFound, WebhookTargetRefused } from "../errors.ts"
import { agentOperation } from "../Operation.ts"
import { ReplyWebhookId } from "../Params.ts"
import { AgentAuth } from "../Security.ts"

// A `connector://` URL's path may not leave its route's prefix (domain/ConnectorPaths.ts).
const Endpoint = Schema.String.check(
  Schema.isMinLength(1),
  Schema.isMaxLength(2048),
  Schema.makeFilter((url: string) => connectorUrlProblem(url) ?? true, {
    expected: "a connector:// path without dot segments, empty segments, backslashes or encoded separators"
  })
)

const webhookFields = {
  name: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(100)),
  url: Endpoint,
  preset: ReplyWebhookPreset,
  headers: WebhookHeaderList,
  events: Schema.Array(ReplyEventType).check(Schema.isMinLength(1), Schema.isMaxLength(3)),
  enabled: Schema.Boolean,
  isDefault: Schema.Boolean
}

/** Body of POST /webhooks. */
export const CreateWebhookRequest = Schema.Struct({
  name: webhookFields.name,
  url: webhookFields.url,
  preset: Schema.optionalKey(webhookFields.preset),
  headers: Schema.optionalKey(webhookFields.headers),
  events: Schema.optionalKey(webhookFields.events),
  enabled: Schema.optionalKey(webhookFields.enabled),
  isDefault: Schema.optionalKey(webhookFields.isDefault)
}).annotate({ identifier: "CreateWebhookRequest" })
export type CreateWebhookRequest = typeof CreateWebhookRequest.Type

/** Body of PATCH /webhooks/{id}: the same fields, all optional; `headers` replaces the saved list. */
export const UpdateWebhookRequest = Schema.Struct({
  name: Schema.optionalKey(webhookFields.name),
  url: Schema.optionalKey(webhookFields.url),
  preset: Schema.optionalKey(webhookFields.preset),
  headers: Schema.optionalKey(webhookFields.headers),
  events: Schema.optionalKey(webhookFields.events),
  enabled: Schema.optionalKey(webhookFields.enabled),
  isDefault: Schema.optionalKey(webhookFields.isDefault)
}).annotate({ identifier: "UpdateWebhookRequest" })
export type UpdateWebhookRequest = typeof UpdateWebhookRequest.Type

export class ReplyWebhookList extends Schema.Class<ReplyWebhookList>("ReplyWebhookList")({
  items: Schema.Array(ReplyWebhook)
}) {}

/** GET /webhooks/{id}: the webhook and its recent deliveries (newest first, at most 50). */
export class ReplyWebhookWithDeliveries extends ReplyWebhook.extend<ReplyWebhookWithDeliveries>("ReplyWebhookWithDeliveries")({
  deliveries: Schema.Array(ReplyWebhookDelivery)
}) {}

const id = { id: ReplyWebhookId }

export class WebhooksGroup extends HttpApiGroup.make("webhooks")
  .add(
    HttpApiEndpoint.get("list", "/webhooks", { success: ReplyWebhookList }).pipe(agentOperation({
      summary: "List reply webhooks",
      description: "The account's saved reply webhooks, newest first. Signing secrets are never returned by reads; " +
        "saved header values read as `[redacted]`.",
      scopes: ["services:read"]
    })),
    HttpApiEndpoint.post("create", "/webhooks", {
      payload: CreateWebhookRequest,
      success: ReplyWebhookCreated.pipe(HttpApiSchema.status(201)),
      error: [WebhookTargetRefused, LimitReached]
    }).pipe(agentOperation({
      summary: "Save a reply webhook",
      description: "Saves an HTTPS endpoint that receives signed prompt outcomes (`interaction.answered`, " +
        "`interaction.expired`, `interaction.canceled`; default all three) in the `preset` shape (`generic` default, " +
        "`assistant`, `chat`) with up to 10 custom headers (not one Herald sets, not a hop-by-hop one such as " +
        "`Connection`, `TE`, `Upgrade`, `Expect`, `Proxy-*` or `Content-Encoding`, no name twice in any case). " +
        "The `signingSecret` (`whsec_…`) is returned here and on " +
        "rotation only. Events are signed the Standard Webhooks way: `webhook-id` (the delivery id, the same on every " +
        "retry), `webhook-timestamp` (Unix seconds), `webhook-signature` (`v1,` + base64 HMAC-SHA256 of " +
        "`id.timestamp.body` keyed by the base64 part of the secret). Deliveries retry after 5 s, 5 min, 30 min, 2 h, " +
        "5 h, 10 h and 10 h (±10 % jitter; eight attempts, then `failed`); 410 Gone fails at once and disables the " +
        "webhook. `isDefault: true` makes it the account default (clearing the flag on the account's other webhook). " +
        "The URL must be `https://`; saving does not depend on DNS, so it refuses (400 `WEBHOOK_TARGET_REFUSED`) " +
        "only what is known without a lookup: an IP literal that is not global unicast (loopback, private, " +
        "link-local, metadata, documentation, benchmarking, reserved… and IPv4 carried in mapped, compatible, 6to4, " +
        "Teredo or NAT64 form, judged as what it carries), or `localhost` and names under it. Every attempt and " +
        "redirect resolves the host and judges every address the same way: a refused one fails the delivery at once " +
        "(logged, not retried); a name that does not resolve fails that attempt, which is logged and retried like any " +
        "failure. With the operator's private-network switch on, private and " +
        "loopback targets are allowed, and plain `http://` only to a loopback address or `localhost`. An account " +
        "keeps at most 50 reply webhooks (422 `LIMIT_REACHED`). A `connector://{connectorId}{path}` URL names a route " +
        "of the account's own connector instead; its path (escapes decoded, any case) may hold no `.` or `..` segment, " +
        "no empty segment, no backslash, no encoded `/` and no control character (400 `VALIDATION_FAILED`).",
      scopes: ["services:write"],
      secret: true
    })),
    HttpApiEndpoint.get("get", "/webhooks/:id", {
      params: id,
      success: ReplyWebhookWithDeliveries,
      error: NotFound
    }).pipe(agentOperation({
      summary: "Read a reply webhook and its recent deliveries",
      description: "The webhook (header values redacted) and its 50 most recent deliveries with their attempt logs. " +
        "Every attempt that was sent is logged, one cut short by a crash of the node sending it included: an " +
        "attempt is recorded as begun before its request leaves, and one never completed is closed once its lease " +
        "lapses (the attempt's 10 s bound + 5 s) with `responseCode: null`, `latencyMs: 0`, an `error` starting " +
        "`interrupted:`, `attemptedAt` when it began, and `status` `retrying` (the event is sent again, with the " +
        "same `webhook-id`) or `failed` (its last attempt, or a sample event).",
      scopes: ["services:read"]
    })),
    HttpApiEndpoint.patch("update", "/webhooks/:id", {
      params: id,
      payload: UpdateWebhookRequest,
      success: ReplyWebhook,
      error: [NotFound, WebhookTargetRefused]
    }).pipe(agentOperation({
      summary: "Update a reply webhook",
      description: "Changes the given fields; `headers` replaces the saved list. Disabling (`enabled: false`) cancels " +
        "the webhook's pending deliveries (`canceled`).",
      scopes: ["services:write"]
    })),
    HttpApiEndpoint.delete("remove", "/webhooks/:id", { params: id, success: Ok, error: NotFound }).pipe(
      agentOperation({
        summary: "Delete a reply webhook",
        description: "Deletes the webhook; its pending deliveries are canceled and services naming it as " +
          "`defaultReplyWebhookId` fall back to none.",
        scopes: ["services:write"]
      })
    ),
    HttpApiEndpoint.post("test", "/webhooks/:id/test", {
      params: id,
      success: ReplyWebhookDelivery,
      error: NotFound
    }).pipe(agentOperation({
      summary: "Send a signed sample event",
      description: "Sends one signed sample `interaction.answered` event (a made-up approved prompt) to the saved " +
        "endpoint with its headers and preset, once, during the request, and answers the delivery record with its " +
        "single attempt. Sample deliveries are not retried.",
      scopes: ["services:write"]
    })),
    HttpApiEndpoint.post("rotateSecret", "/webhooks/:id/rotate-secret", {
      params: id,
      success: ReplyWebhookCreated,
      error: NotFound
    }).pipe(agentOperation({
      summary: "Rotate the signing secret",
      description: "Replaces the signing secret and returns the new one once. Deliveries made from now on, " +
        "retries of earlier ones included, are signed with the new secret.",
      scopes: ["services:write"],
      secret: true
    }))
  )
  .middleware(AgentAuth)
{}
