/** Records of reply webhooks: saved signed destinations for prompt outcomes, and their deliveries. */
import { Schema } from "effect"
import { Timestamp, Uri } from "./Common.ts"

/** ReplyWebhook `preset`: the payload shape (`generic`, or the product-specific `assistant` and `chat`). */
export const ReplyWebhookPreset = Schema.Literals(["generic", "assistant", "chat"])
export type ReplyWebhookPreset = typeof ReplyWebhookPreset.Type

/** The three reply event types, sent "when a prompt ends". */
export const ReplyEventType = Schema.Literals(["interaction.answered", "interaction.expired", "interaction.canceled"])
export type ReplyEventType = typeof ReplyEventType.Type

/** Names Herald sets itself on every delivery (the signature, the body's type and length, the host, the agent). */
const ownHeaders = new Set([
  "webhook-id",
  "webhook-timestamp",
  "webhook-signature",
  "content-type",
  "content-length",
  "host",
  "user-agent"
])
/**
 * Hop-by-hop and message-framing headers (RFC 9110 §7.6.1, §10.1.1, §8.4;
 * RFC 9112): they steer the connection, the proxy or the body's coding rather
 * than inform the receiver, and a saved one would contradict what Herald sends.
 */
const hopByHopHeaders = new Set(["connection", "keep-alive", "te", "trailer", "transfer-encoding", "upgrade", "expect", "content-encoding"])

const refusedHeaderName = (name: string): string | undefined => {
  const lower = name.toLowerCase()
  if (ownHeaders.has(lower)) return `the header ${name} is set by Herald`
  if (hopByHopHeaders.has(lower) || lower.startsWith("proxy-")) return `the header ${name} is a hop-by-hop header`
  return undefined
}

/** A custom header's name: an RFC 9110 token, neither set by Herald nor hop-by-hop; the issue names it. */
export const WebhookHeaderName = Schema.String.check(
  Schema.isPattern(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/),
  Schema.makeFilter((name: string) => refusedHeaderName(name), {
    expected: "a header name other than webhook-id, webhook-timestamp, webhook-signature, content-type, " +
      "content-length, host, user-agent, the hop-by-hop headers (connection, keep-alive, te, trailer, " +
      "transfer-encoding, upgrade, expect, proxy-*) and content-encoding"
  })
)
/** Visible ASCII and spaces, no line breaks (no header injection). */
export const WebhookHeaderValue = Schema.String.check(Schema.isPattern(/^[\x20-\x7e]{1,1024}$/))

/** Up to 10 custom headers, each name once: names are case-insensitive, so two differing only in case are refused. */
export const WebhookHeaderList = Schema.Array(Schema.Struct({ name: WebhookHeaderName, value: WebhookHeaderValue })).check(
  Schema.isMaxLength(10),
  Schema.makeFilter((headers: ReadonlyArray<{ readonly name: string }>) => {
    const seen = new Map<string, string>()
    const issues: Array<{ readonly path: ReadonlyArray<PropertyKey>; readonly issue: string }> = []
    headers.forEach(({ name }, i) => {
      const first = seen.get(name.toLowerCase())
      if (first !== undefined) issues.push({ path: [i, "name"], issue: `the header ${name} repeats ${first} (names ignore case)` })
      else seen.set(name.toLowerCase(), name)
    })
    return issues
  }, { expected: "header names that differ in more than case" })
)

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
