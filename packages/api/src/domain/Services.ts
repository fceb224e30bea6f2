/** Records of webhook services: the services agents create, and their inbound deliveries. */
import { Schema } from "effect"
import { Timestamp } from "./Common.ts"

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
  defaultReplyWebhookId: Schema.NullOr(Schema.String)
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
  createdAt: Timestamp
}) {}
