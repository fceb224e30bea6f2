import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { ImageUrl, Ok, TapUrl } from "../domain/Common.ts"
import { InboundFormat, InboundTemplate } from "../domain/InboundFormats.ts"
import { AgentService, ServiceCreated } from "../domain/Services.ts"
import { ServiceWatchSettings } from "../domain/Watch.ts"
import { Forbidden, LimitReached, NotFound } from "../errors.ts"
import { agentOperation } from "../Operation.ts"
import { ServiceId } from "../Params.ts"
import { AgentAuth } from "../Security.ts"

const Title = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(100))
const ReplyWebhookId = Schema.String.check(Schema.isPattern(/^whk_[0-9A-Za-z]{1,64}$/))

/** The rules of `format` and `template`, in both bodies' descriptions. */
const formatRules = "`format` says how the webhook URL reads deliveries: `herald` (the spec's JSON), `grafana`, " +
  "`alertmanager`, `github`, `gitlab`, `uptime-kuma`, `sentry`, `form` (x-www-form-urlencoded), `text`, or `json` (any " +
  "JSON, mapped by `template`); absent or null, each delivery's format is detected from its headers and shape. " +
  "`template` maps `json` deliveries: `{body*, title?, url?, priority?, alertKey?, state?}`, each a string of at most " +
  "1,000 characters with at most 20 `{{path}}` placeholders (dot names and `[n]` indexes, e.g. " +
  "`{{alerts[0].labels.instance}}`); a malformed one is 400 `VALIDATION_FAILED`. docs/inbound-webhooks.md has the " +
  "detection order, the severity table and the template syntax."

/** The dead-man's switch rules, in both bodies' descriptions (docs/dead-mans-switch.md). */
const watchRules = "`watch` (at creation absent or null: none; on update absent leaves it, null turns it off) makes the service expect a delivery at least every " +
  "`expectEverySeconds` (60–604,800). When none arrives for that long plus `graceSeconds` (0–86,400, default 300) " +
  "— counted from the last delivery, or from when the watch was saved — the service's audience (the creator and, " +
  "when shared, each family member) gets one push, priority `high`: \"<title> has been silent since …\"; no second " +
  "one while it stays silent, and one \"<title> is delivering again\" at the next delivery. With `alertGroupId` " +
  "(an on-call group of a team the creator belongs to, else 404 `NOT_FOUND`) the silence pages that group instead, " +
  "and the page is resolved when deliveries resume. Saving `watch` restarts it (a silent state is cleared without a " +
  "notice). The record's `watch` shows the settings, `lastDeliveryAt`, `silentSince` and `dueAt`. Only the creator " +
  "sets `watch` (from anyone else: 403 `FORBIDDEN`)."

/** Body of POST /services. */
export const CreateServiceRequest = Schema.Struct({
  title: Title,
  imageUrl: Schema.optionalKey(Schema.NullOr(ImageUrl)),
  url: Schema.optionalKey(Schema.NullOr(TapUrl)),
  defaultReplyWebhookId: Schema.optionalKey(Schema.NullOr(ReplyWebhookId)),
  format: Schema.optionalKey(Schema.NullOr(InboundFormat)),
  template: Schema.optionalKey(Schema.NullOr(InboundTemplate)),
  watch: Schema.optionalKey(Schema.NullOr(ServiceWatchSettings))
}).annotate({ identifier: "CreateServiceRequest" })
export type CreateServiceRequest = typeof CreateServiceRequest.Type

/** Body of PATCH /services/{id}: the fields to change; `null` clears a nullable one. */
export const UpdateServiceRequest = Schema.Struct({
  title: Schema.optionalKey(Title),
  imageUrl: Schema.optionalKey(Schema.NullOr(ImageUrl)),
  url: Schema.optionalKey(Schema.NullOr(TapUrl)),
  defaultReplyWebhookId: Schema.optionalKey(Schema.NullOr(ReplyWebhookId)),
  format: Schema.optionalKey(Schema.NullOr(InboundFormat)),
  template: Schema.optionalKey(Schema.NullOr(InboundTemplate)),
  watch: Schema.optionalKey(Schema.NullOr(ServiceWatchSettings))
}).annotate({ identifier: "UpdateServiceRequest" })
export type UpdateServiceRequest = typeof UpdateServiceRequest.Type

/** Body of POST /services/{id}/share. */
export const ShareServiceRequest = Schema.Struct({
  familyId: Schema.NullOr(Schema.String.check(Schema.isPattern(/^team_[0-9A-Za-z]{1,64}$/)))
}).annotate({ identifier: "ShareServiceRequest" })
export type ShareServiceRequest = typeof ShareServiceRequest.Type

export class ServiceList extends Schema.Class<ServiceList>("ServiceList")({
  items: Schema.Array(AgentService)
}) {}

export class ServicesGroup extends HttpApiGroup.make("services")
  .add(
    HttpApiEndpoint.get("list", "/services", { success: ServiceList }).pipe(agentOperation({
      summary: "List webhook services",
      description: "The account's webhook services and those shared with a family the account is a member of, " +
        "newest first, without webhook URLs.",
      scopes: ["services:read"]
    })),
    HttpApiEndpoint.post("create", "/services", {
      payload: CreateServiceRequest,
      success: ServiceCreated.pipe(HttpApiSchema.status(201)),
      error: [NotFound, LimitReached]
    }).pipe(agentOperation({
      summary: "Create a webhook service",
      description: "Creates a service that receives inbound notifications at its webhook URL. The URL embeds a random " +
        "256-bit token (`hlw_…`) that Herald stores only as a hash: it is returned here once. `defaultReplyWebhookId` " +
        "must name one of the account's reply webhooks (else 404); outcome events of prompts sent through the " +
        "service go there too. An account keeps at most 1,000 services (422 `LIMIT_REACHED` with `limit`). " + formatRules + " " +
        watchRules,
      scopes: ["services:write"],
      secret: true
    })),
    HttpApiEndpoint.get("get", "/services/:id", { params: { id: ServiceId }, success: AgentService, error: NotFound })
      .pipe(agentOperation({
        summary: "Get a webhook service",
        description: "One AgentService the account created or that is shared with a family the account is a member " +
          "of (never with its webhook URL). Any other answers 404.",
        scopes: ["services:read"]
      })),
    HttpApiEndpoint.patch("update", "/services/:id", {
      params: { id: ServiceId },
      payload: UpdateServiceRequest,
      success: AgentService,
      error: [NotFound, Forbidden]
    }).pipe(agentOperation({
      summary: "Update a webhook service",
      description: "Updates title, avatar (`imageUrl`), tap URL or default reply webhook (one of the account's reply " +
        "webhooks, else 404; null clears it). The creator may update; on a shared service the family's owner may " +
        "too (title, avatar, tap URL: a `defaultReplyWebhookId` from anyone but the creator is 403 `FORBIDDEN`). Other " +
        "family members who can see it: 403 `FORBIDDEN`; anyone else: 404. A change to a shared service is written " +
        "to the family's audit log (`service.updated`). `format` and `template` as at creation (null clears them): " +
        formatRules + " " + watchRules,
      scopes: ["services:write"]
    })),
    HttpApiEndpoint.delete("remove", "/services/:id", {
      params: { id: ServiceId },
      success: Ok,
      error: [NotFound, Forbidden]
    })
      .pipe(agentOperation({
        summary: "Delete a webhook service",
        description: "Deletes the service; its webhook URL stops working at once. Its past events stay in history. " +
          "The creator may delete; on a shared service the family's owner may too. Other family members who can see " +
          "it: 403 `FORBIDDEN`; anyone else: 404. Deleting a shared service is written to the family's audit log " +
          "(`service.deleted`).",
        scopes: ["services:write"]
      })),
    HttpApiEndpoint.post("share", "/services/:id/share", {
      params: { id: ServiceId },
      payload: ShareServiceRequest,
      success: AgentService,
      error: [NotFound, Forbidden]
    }).pipe(agentOperation({
      summary: "Share a webhook service with a family",
      description: "`familyId` shares the service with that family, `null` unshares it; sharing with another family " +
        "moves it. Only the original creator may share or unshare (others who can see it: 403 `FORBIDDEN`; a service " +
        "the caller cannot see: 404). The caller must be a member of the family, and it must be a family: a family " +
        "the caller is not in, or a workplace team, answers 404. The family's accepted members then see the service " +
        "(without its webhook URL) and each receive its alerts on all their devices, with their own inbox copy " +
        "(independent read state); GET /events stays the creator's. The family's owner may rename or delete it; only " +
        "the creator may rotate or see the webhook token. A creator leaving or removed from the family unshares the " +
        "creator's services automatically; deleting the family unshares them too. Sharing and unsharing are written " +
        "to the family's audit log (`service.shared`, `service.unshared`).",
      scopes: ["services:write"]
    })),
    HttpApiEndpoint.post("rotate", "/services/:id/rotate", {
      params: { id: ServiceId },
      success: ServiceCreated,
      error: [NotFound, Forbidden]
    }).pipe(agentOperation({
      summary: "Rotate a webhook service's token",
      description: "Issues a new webhook URL, returned once; the old URL stops working at once (404). Only the creator " +
        "may rotate (a family member who can see it, owner included: 403 `FORBIDDEN`; anyone else: 404).",
      scopes: ["services:write"],
      secret: true
    }))
  )
  .middleware(AgentAuth)
{}
