/** Records of reply webhooks: saved signed destinations for prompt outcomes, and their deliveries. */
import { Schema } from "effect"
import { Timestamp, Uri } from "./Common.ts"

/** ReplyWebhook `preset`: the payload shape (`generic`, or the product-specific `assistant` and `chat`). */
export const ReplyWebhookPreset = Schema.Literals(["generic", "assistant", "chat"])
export type ReplyWebhookPreset = typeof ReplyWebhookPreset.Type

/** The three reply event types, sent "when a prompt ends". */
export const ReplyEventType = Schema.Literals(["interaction.answered", "interaction.expired", "interaction.canceled"])
export type ReplyEventType = typeof ReplyEventType.Type

/** A saved custom header of a reply webhook; reads return the value redacted. */
export class ReplyWebhookHeader extends Schema.Class<ReplyWebhookHeader>("ReplyWebhookHeader")({
  name: Schema.String,
  value: Schema.String
}) {}

/** ReplyWebhook: a saved "HTTPS destination for signed reply events"; id `whk_…`. */
export class ReplyWebhook extends Schema.Class<ReplyWebhook>("ReplyWebhook")({
  /** The account-level default reply destination. */
  isDefault: Schema.Boolean,
  id: Schema.String,
  name: Schema.String,
  url: Uri,
  preset: ReplyWebhookPreset,
  headers: Schema.Array(ReplyWebhookHeader),
  events: Schema.Array(ReplyEventType),
  enabled: Schema.Boolean,
  createdAt: Timestamp,
  updatedAt: Timestamp
}) {}

/** ReplyWebhookCreated: the webhook and its plaintext `signingSecret` ("returned only on creation or rotation"). */
export class ReplyWebhookCreated extends Schema.Class<ReplyWebhookCreated>("ReplyWebhookCreated")({
  webhook: ReplyWebhook,
  signingSecret: Schema.String
}) {}

/** The outcome of one delivery attempt. */
export const ReplyWebhookAttemptStatus = Schema.Literals(["delivered", "retrying", "failed"])
export type ReplyWebhookAttemptStatus = typeof ReplyWebhookAttemptStatus.Type

/** One entry of a delivery's `attemptLog`: "each attempt is logged in the delivery record". */
export class ReplyWebhookAttempt extends Schema.Class<ReplyWebhookAttempt>("ReplyWebhookAttempt")({
  attempt: Schema.Natural,
  attemptedAt: Timestamp,
  status: ReplyWebhookAttemptStatus,
  latencyMs: Schema.Natural,
  /** Null when no HTTP answer came (timeout, connection refused). */
  responseCode: Schema.NullOr(Schema.Int),
  error: Schema.NullOr(Schema.String)
}) {}

/** Reply webhook delivery statuses. */
export const ReplyWebhookDeliveryStatus = Schema.Literals(["pending", "retrying", "delivered", "failed", "canceled"])
export type ReplyWebhookDeliveryStatus = typeof ReplyWebhookDeliveryStatus.Type

/** ReplyWebhookDelivery: one reply event on its way to one webhook; id `whd_…`. */
export class ReplyWebhookDelivery extends Schema.Class<ReplyWebhookDelivery>("ReplyWebhookDelivery")({
  attemptLog: Schema.Array(ReplyWebhookAttempt),
  id: Schema.String,
  type: ReplyEventType,
  status: ReplyWebhookDeliveryStatus,
  attempts: Schema.Natural,
  responseCode: Schema.NullOr(Schema.Int),
  latencyMs: Schema.NullOr(Schema.Natural),
  error: Schema.NullOr(Schema.String),
  createdAt: Timestamp,
  deliveredAt: Schema.NullOr(Timestamp),
  nextAttemptAt: Schema.NullOr(Timestamp)
}) {}
