/**
 * The error vocabulary of both APIs.
 *
 * The spec fixes every error body as `{error, code, issues?, required?}`. Each
 * class below is a schema-backed yieldable error whose `_tag` is filled on
 * decode and omitted on encode, so `Effect.catchTag` works on both sides while
 * the wire carries only the spec's fields. `code` is the literal discriminator
 * that tells classes sharing a status apart (403 `MISSING_SCOPE` vs `FORBIDDEN`).
 */
import { Schema } from "effect"
import { Scope } from "./domain/Scope.ts"

const body = <const Tag extends string, const Code extends string>(tag: Tag, code: Code) => ({
  _tag: Schema.tagDefaultOmit(tag),
  error: Schema.String,
  code: Schema.tag(code)
})

/**
 * The spec's Error record: the body of every error answer, whatever its code.
 * The classes below are its narrowings, one per code, that operations declare;
 * this one reads any of them (a client meeting a code it does not know yet).
 */
export class ErrorRecord extends Schema.Class<ErrorRecord>("Error")({
  error: Schema.String,
  code: Schema.optionalKey(Schema.String),
  issues: Schema.optionalKey(Schema.Unknown),
  required: Schema.optionalKey(Schema.Array(Schema.String))
}) {}

/** 400: a body, query, path or header failed validation; `issues` says where. */
export class ValidationFailed extends Schema.Error<ValidationFailed>("ValidationFailed")({
  ...body("ValidationFailed", "VALIDATION_FAILED"),
  issues: Schema.optionalKey(
    Schema.Array(Schema.Struct({ path: Schema.String, message: Schema.String }))
  )
}, { httpApiStatus: 400, description: "The request failed validation (`VALIDATION_FAILED`, with `issues`)." }) {}

/** 400: a request that is well-formed but makes no sense (e.g. a tampered cursor). */
export class BadRequest extends Schema.Error<BadRequest>("BadRequest")({
  ...body("BadRequest", "BAD_REQUEST")
}, { httpApiStatus: 400, description: "The request is invalid (`BAD_REQUEST`)." }) {}

/** 401: token missing, malformed, unknown, revoked or expired. */
export class Unauthorized extends Schema.Error<Unauthorized>("Unauthorized")({
  ...body("Unauthorized", "UNAUTHORIZED")
}, { httpApiStatus: 401, description: "Token missing, malformed, unknown, revoked or expired (`UNAUTHORIZED`)." }) {}

/** 403: the token lacks scopes; `required` lists every missing one. */
export class MissingScope extends Schema.Error<MissingScope>("MissingScope")({
  ...body("MissingScope", "MISSING_SCOPE"),
  required: Schema.Array(Scope)
}, { httpApiStatus: 403, description: "The token lacks scopes (`MISSING_SCOPE`, `required` lists them)." }) {}

/** 403: the account lacks permission (a role check). */
export class Forbidden extends Schema.Error<Forbidden>("Forbidden")({
  ...body("Forbidden", "FORBIDDEN")
}, { httpApiStatus: 403, description: "The account lacks permission (`FORBIDDEN`)." }) {}

/**
 * 403: a browser request refused as possible cross-site request forgery: a
 * cookie-authenticated change without `X-Herald-CSRF`, or an `Origin` that is
 * not Herald's public origin.
 */
export class CsrfRejected extends Schema.Error<CsrfRejected>("CsrfRejected")({
  ...body("CsrfRejected", "CSRF_REJECTED")
}, {
  httpApiStatus: 403,
  description: "Refused as possible cross-site request forgery: a cookie-authenticated POST, PUT, PATCH or DELETE " +
    "needs the `X-Herald-CSRF` header, and an `Origin` header, when sent, must be Herald's public origin (`CSRF_REJECTED`)."
}) {}

/** 404: not found for this account; also conceals another account's resource. */
export class NotFound extends Schema.Error<NotFound>("NotFound")({
  ...body("NotFound", "NOT_FOUND")
}, { httpApiStatus: 404, description: "Not found for this account (`NOT_FOUND`)." }) {}

/** 409: the request conflicts with the resource's current state. */
export class Conflict extends Schema.Error<Conflict>("Conflict")({
  ...body("Conflict", "CONFLICT")
}, { httpApiStatus: 409, description: "Conflicts with the current state (`CONFLICT`)." }) {}

/** 409: an `Idempotency-Key` whose first request is still running. */
export class IdempotencyKeyInUse extends Schema.Error<IdempotencyKeyInUse>("IdempotencyKeyInUse")({
  ...body("IdempotencyKeyInUse", "IDEMPOTENCY_KEY_IN_USE")
}, {
  httpApiStatus: 409,
  description: "A request with this `Idempotency-Key` is still running; retry it later (`IDEMPOTENCY_KEY_IN_USE`)."
}) {}

/** 422: an `Idempotency-Key` reused with a different body. */
export class IdempotencyKeyReused extends Schema.Error<IdempotencyKeyReused>("IdempotencyKeyReused")({
  ...body("IdempotencyKeyReused", "IDEMPOTENCY_KEY_REUSED")
}, {
  httpApiStatus: 422,
  description: "This `Idempotency-Key` was used within 24 h with a different body (`IDEMPOTENCY_KEY_REUSED`)."
}) {}

/** 502: withdrawing a notification when no device accepted the removal command. */
export class WithdrawFailed extends Schema.Error<WithdrawFailed>("WithdrawFailed")({
  ...body("WithdrawFailed", "WITHDRAW_FAILED")
}, {
  httpApiStatus: 502,
  description: "No device accepted the removal command (`WITHDRAW_FAILED`); the inbox copy is marked read anyway."
}) {}

/**
 * 409 `CONFLICT` (ARCHITECTURE's code for it): answering or canceling a prompt
 * that already left `pending` (the first answer wins). The prompt routes' own
 * name for `Conflict`: no operation declares both, so the code still tells
 * every declared error apart.
 */
export class InteractionNotPending extends Schema.Error<InteractionNotPending>("InteractionNotPending")({
  ...body("InteractionNotPending", "CONFLICT")
}, {
  httpApiStatus: 409,
  description: "The prompt is no longer pending: it was answered, canceled or expired first (`CONFLICT`)."
}) {}

/** 400 (ARCHITECTURE): an answer whose status does not fit the prompt's kind (or a reply without a response). */
export class AnswerMismatch extends Schema.Error<AnswerMismatch>("AnswerMismatch")({
  ...body("AnswerMismatch", "ANSWER_DOES_NOT_FIT_KIND")
}, {
  httpApiStatus: 400,
  description: "The answer does not fit the prompt's kind: approval takes approved|denied, yes_no takes yes|no, " +
    "reply takes replied with a `response` (`ANSWER_DOES_NOT_FIT_KIND`)."
}) {}

/** 422: a live-activity prompt with no target device that can show an interactive live activity. */
export class InteractiveLiveActivityUnsupported extends Schema.Error<InteractiveLiveActivityUnsupported>(
  "InteractiveLiveActivityUnsupported"
)({
  ...body("InteractiveLiveActivityUnsupported", "INTERACTIVE_LIVE_ACTIVITY_UNSUPPORTED")
}, {
  httpApiStatus: 422,
  description: "`presentation: live_activity` needs at least one target device with " +
    "`interactiveLiveActivitiesCapable` (`INTERACTIVE_LIVE_ACTIVITY_UNSUPPORTED`)."
}) {}

/** 409: starting a key of the caller's that is still live, without `replace`. */
export class ActivityKeyConflict extends Schema.Error<ActivityKeyConflict>("ActivityKeyConflict")({
  ...body("ActivityKeyConflict", "ACTIVITY_KEY_CONFLICT")
}, {
  httpApiStatus: 409,
  description: "A live activity with this key, started by this token, is still live; pass `replace: true` to end it " +
    "and start anew (`ACTIVITY_KEY_CONFLICT`)."
}) {}

/** 409: updating or ending a live activity that has ended or expired. */
export class ActivityEnded extends Schema.Error<ActivityEnded>("ActivityEnded")({
  ...body("ActivityEnded", "ACTIVITY_ENDED")
}, { httpApiStatus: 409, description: "The live activity has ended or expired (`ACTIVITY_ENDED`)." }) {}

/** 400: the props would make an APNs payload over its 4 KB limit. */
export class ActivityPayloadTooLarge extends Schema.Error<ActivityPayloadTooLarge>("ActivityPayloadTooLarge")({
  ...body("ActivityPayloadTooLarge", "ACTIVITY_PAYLOAD_TOO_LARGE"),
  limit: Schema.Int
}, {
  httpApiStatus: 400,
  description: "The live activity's push payload would exceed APNs' `limit` (4096) bytes; shorten the props " +
    "(`ACTIVITY_PAYLOAD_TOO_LARGE`)."
}) {}

/** 422: no target device can show live activities. */
export class NoLiveActivityDevice extends Schema.Error<NoLiveActivityDevice>("NoLiveActivityDevice")({
  ...body("NoLiveActivityDevice", "NO_LIVE_ACTIVITY_DEVICE")
}, {
  httpApiStatus: 422,
  description: "None of the target devices can show live activities (`liveActivitiesCapable`) " +
    "(`NO_LIVE_ACTIVITY_DEVICE`)."
}) {}

/** 422: every target device already holds five concurrent live activities. */
export class ActivityCapacityExceeded extends Schema.Error<ActivityCapacityExceeded>("ActivityCapacityExceeded")({
  ...body("ActivityCapacityExceeded", "ACTIVITY_CAPACITY_EXCEEDED"),
  limit: Schema.Int
}, {
  httpApiStatus: 422,
  description: "No target device has room: each holds at most `limit` (5) concurrent live activities, interactive " +
    "prompt cards included (`ACTIVITY_CAPACITY_EXCEEDED`)."
}) {}

/** 422: the account already has as many of this resource as it may (e.g. 50 reply webhooks). */
export class LimitReached extends Schema.Error<LimitReached>("LimitReached")({
  ...body("LimitReached", "LIMIT_REACHED"),
  limit: Schema.Int
}, {
  httpApiStatus: 422,
  description: "The account already has the most it may have of this resource; `limit` says how many (`LIMIT_REACHED`)."
}) {}

/** 400: a reply-webhook URL that Herald refuses to call (scheme, or a private, loopback or metadata address). */
export class WebhookTargetRefused extends Schema.Error<WebhookTargetRefused>("WebhookTargetRefused")({
  ...body("WebhookTargetRefused", "WEBHOOK_TARGET_REFUSED")
}, {
  httpApiStatus: 400,
  description: "The URL is not an allowed destination: HTTPS only, and no loopback, private, link-local or " +
    "metadata address after DNS resolution (`WEBHOOK_TARGET_REFUSED`)."
}) {}

/** 413: the body is over the route's limit (1 MiB unless stated). */
export class PayloadTooLarge extends Schema.Error<PayloadTooLarge>("PayloadTooLarge")({
  ...body("PayloadTooLarge", "PAYLOAD_TOO_LARGE")
}, { httpApiStatus: 413, description: "The body is over the route's size limit (`PAYLOAD_TOO_LARGE`)." }) {}

/** 415: a body was sent with a content type the route does not take. */
export class UnsupportedMediaType extends Schema.Error<UnsupportedMediaType>("UnsupportedMediaType")({
  ...body("UnsupportedMediaType", "UNSUPPORTED_MEDIA_TYPE")
}, { httpApiStatus: 415, description: "The body's content type is not accepted (`UNSUPPORTED_MEDIA_TYPE`)." }) {}

/** 429: over a per-minute limit (a token's, or a webhook service's for its inbound URL); `Retry-After` and `RateLimit-*` headers say when. */
export class RateLimited extends Schema.Error<RateLimited>("RateLimited")({
  ...body("RateLimited", "RATE_LIMITED")
}, { httpApiStatus: 429, description: "Over a rate limit: the token's, the webhook service's, a team's domain verifications, or a mini-app package's offers (`RATE_LIMITED`)." }) {}

/** 500: an unexpected failure; the body never carries a stack trace. */
export class InternalError extends Schema.Error<InternalError>("InternalError")({
  ...body("InternalError", "INTERNAL_ERROR")
}, { httpApiStatus: 500, description: "An unexpected failure (`INTERNAL_ERROR`)." }) {}

/** 503: a dependency (the database) is unavailable; retry later. */
export class ServiceUnavailable extends Schema.Error<ServiceUnavailable>("ServiceUnavailable")({
  ...body("ServiceUnavailable", "SERVICE_UNAVAILABLE")
}, { httpApiStatus: 503, description: "A dependency is unavailable (`SERVICE_UNAVAILABLE`)." }) {}

/**
 * The OpenAPI document as the wire has it: `_tag` is filled on decode and
 * omitted on encode (`tagDefaultOmit`), so no error body carries it; the
 * generated error schemas list it all the same. Given to each API as its
 * OpenAPI `transform`, this drops it from every error schema (those with a
 * `code`).
 */
export const errorSchemasAsSent = (spec: Record<string, any>): Record<string, any> => {
  const schemas: Record<string, { properties?: Record<string, unknown>; required?: Array<string> }> = spec.components?.schemas ?? {}
  for (const schema of Object.values(schemas)) {
    const properties = schema.properties
    if (properties === undefined || !("_tag" in properties) || !("code" in properties)) continue
    delete properties._tag
    if (schema.required !== undefined) schema.required = schema.required.filter((key) => key !== "_tag")
  }
  return spec
}

/** Errors every authenticated endpoint can answer, declared once on the security middleware. */
export const AuthErrors = [Unauthorized, MissingScope] as const

/** Errors any endpoint can answer, declared once on the request-guard middleware. */
export const CommonErrors = [ValidationFailed, PayloadTooLarge, UnsupportedMediaType, RateLimited, InternalError, ServiceUnavailable] as const

/** 400: a team domain that is a public mailbox provider's (gmail.com, outlook.com, …). */
export class PublicEmailDomain extends Schema.Error<PublicEmailDomain>("PublicEmailDomain")({
  ...body("PublicEmailDomain", "PUBLIC_EMAIL_DOMAIN")
}, {
  httpApiStatus: 400,
  description: "The domain belongs to a public mailbox provider and cannot be a team's domain (`PUBLIC_EMAIL_DOMAIN`)."
}) {}

/** 422: the DNS TXT challenge of a team domain was not found (no record, another value, or no such name). */
export class DomainNotVerified extends Schema.Error<DomainNotVerified>("DomainNotVerified")({
  ...body("DomainNotVerified", "DOMAIN_NOT_VERIFIED")
}, {
  httpApiStatus: 422,
  description: "The domain's TXT challenge was not found; the message says which name was looked up and what to " +
    "publish there (`DOMAIN_NOT_VERIFIED`)."
}) {}

/** 502: the DNS resolver failed (timeout, SERVFAIL, refused); remembered for the domain up to a minute. */
export class DnsLookupFailed extends Schema.Error<DnsLookupFailed>("DnsLookupFailed")({
  ...body("DnsLookupFailed", "DNS_LOOKUP_FAILED")
}, {
  httpApiStatus: 502,
  description: "The DNS lookup failed (timeout, SERVFAIL, refused); `Retry-After` says when a new lookup will be " +
    "made (`DNS_LOOKUP_FAILED`)."
}) {}

/** 401: a connector pass or session that is used, expired, unknown, or no longer allowed. */
export class PassInvalid extends Schema.Error<PassInvalid>("PassInvalid")({
  ...body("PassInvalid", "PASS_INVALID")
}, {
  httpApiStatus: 401,
  description: "The connector pass or session is used, expired, unknown, bound to another connector, or its person " +
    "may no longer use the connector (`PASS_INVALID`)."
}) {}

/** 401: a connector callback whose signature, timestamp, body digest or delivery id does not check out. */
export class CallbackInvalid extends Schema.Error<CallbackInvalid>("CallbackInvalid")({
  ...body("CallbackInvalid", "CALLBACK_INVALID")
}, {
  httpApiStatus: 401,
  description: "The connector callback is refused: bad signature, a timestamp more than 5 minutes off, a body digest " +
    "that is not the delivery's, or a delivery id unknown to the connector or already used (`CALLBACK_INVALID`)."
}) {}
