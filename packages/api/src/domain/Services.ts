/** Records of webhook services: the services agents create, and their inbound deliveries. */
import { Schema } from "effect"
import { AlertPriority, Timestamp } from "./Common.ts"
import { AlertState, InboundFormat, InboundTemplate } from "./InboundFormats.ts"
import { ServiceWatch } from "./Watch.ts"

/** AgentService: a webhook service that "receive[s] inbound notifications"; id `svc_…`. */
export class AgentService extends Schema.Class<AgentService>("AgentService")({
  id: Schema.String,
  title: Schema.String,
  imageUrl: Schema.NullOr(Schema.String),
  /** The tap URL. */
  url: Schema.NullOr(Schema.String),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  familyId: Schema.NullOr(Schema.String),
  defaultReplyWebhookId: Schema.NullOr(Schema.String),
  /** How deliveries are read; `null`: detected per delivery (docs/inbound-webhooks.md). */
  format: Schema.NullOr(InboundFormat),
  /** The mapping of generic JSON deliveries (format `json`), if any. */
  template: Schema.NullOr(InboundTemplate),
  /** The dead-man's switch (docs/dead-mans-switch.md): null when the service expects no regular deliveries. */
  watch: Schema.optionalKey(Schema.NullOr(ServiceWatch))
}) {}

/**
 * The `service` of ServiceCreated: "AgentService plus `webhookUrl` (string|null)". The spec marks
 * this copy of `webhookUrl` neither required nor not, so it is optional; Herald always fills it.
 */
export class AgentServiceWithWebhookUrl extends AgentService.extend<AgentServiceWithWebhookUrl>("AgentServiceWithWebhookUrl")({
  webhookUrl: Schema.optionalKey(Schema.NullOr(Schema.String))
}) {}

/** ServiceCreated: the new service and its full webhook URL (with the plaintext token), returned once. */
export class ServiceCreated extends Schema.Class<ServiceCreated>("ServiceCreated")({
  service: AgentServiceWithWebhookUrl,
  webhookUrl: Schema.String
}) {}

/** Event: a "recent webhook-service delivery record"; id `evt_…`. */
export class Event extends Schema.Class<Event>("Event")({
  id: Schema.String,
  serviceId: Schema.String,
  serviceTitle: Schema.String,
  title: Schema.NullOr(Schema.String),
  body: Schema.String,
  imageUrl: Schema.NullOr(Schema.String),
  url: Schema.NullOr(Schema.String),
  // The spec leaves the status set open ("status (string)").
  status: Schema.String,
  deliveredCount: Schema.Natural,
  error: Schema.NullOr(Schema.String),
  createdAt: Timestamp,
  /** The format the delivery was read as (null: delivered before formats existed). */
  format: Schema.NullOr(InboundFormat),
  /** How much its push may interrupt, from the sender's severity (null: delivered before priorities existed). */
  priority: Schema.NullOr(AlertPriority),
  /** The sender's identity of the alert (fingerprint, group key, monitor or issue id), when it has one. */
  alertKey: Schema.NullOr(Schema.String),
  /** `firing` or `resolved` for an alert; null for anything else. */
  state: Schema.NullOr(AlertState),
  /** The delivery as parsed (JSON, or a form's fields), unknown fields included; bounded (docs/limits.md). */
  payload: Schema.NullOr(Schema.Unknown)
}) {}
