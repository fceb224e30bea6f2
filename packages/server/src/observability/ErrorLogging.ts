/**
 * Unexpected failures are logged, expected ones are not. The HTTP stack hands
 * every failure of a request to the error reporters; a typed API error below
 * 500 (401, 404, a validation failure…) is an answer, not an incident, so it
 * is skipped. Defects and 5xx errors are logged at Error with their cause and
 * the request id the request's log annotations carry.
 */
import { Cause, Effect, ErrorReporter } from "effect"

// The framework's own client errors: no route, or a body that could not be
// read (over its limit, cut short). They answer 404/413/400, not incidents.
const clientHttpError = (error: object): boolean =>
  (error as { _tag?: unknown })._tag === "HttpServerError" &&
  ["RequestParseError", "RouteNotFound"].includes(String((error as { reason?: { _tag?: unknown } }).reason?._tag))

// The OAuth routes' refusals (RFC 6749 `{error, error_description}`, no `code`): a client's mistake, not ours.
const oauthRefusals: ReadonlySet<unknown> = new Set([
  "OAuthError",
  "OAuthInvalidClient",
  "OAuthInvalidToken",
  "OAuthAccessDenied",
  "OAuthTemporarilyUnavailable"
])

const expectedStatus = (error: unknown): boolean => {
  if (typeof error !== "object" || error === null) return false
  if (clientHttpError(error)) return true
  if (oauthRefusals.has((error as { _tag?: unknown })._tag)) return true
  if (!("code" in error)) return false
  const code = (error as { code: unknown }).code
  return typeof code === "string" && code !== "INTERNAL_ERROR" && code !== "SERVICE_UNAVAILABLE"
}

const reporter = ErrorReporter.make(({ cause, fiber }) => {
  // The body reader's overflow reaches here as a defect of the payload decoder.
  const clientOnly = cause.reasons.length > 0 && cause.reasons.every((r) =>
    (Cause.isDieReason(r) && typeof r.defect === "object" && r.defect !== null && clientHttpError(r.defect)) ||
    (Cause.isFailReason(r) && typeof r.error === "object" && r.error !== null && clientHttpError(r.error))
  )
  if (clientOnly) return
  const defect = cause.reasons.some(Cause.isDieReason)
  const failures = cause.reasons.filter(Cause.isFailReason)
  if (!defect && failures.length > 0 && failures.every((f) => expectedStatus(f.error))) return
  Effect.runForkWith(fiber.context)(Effect.logError("unexpected failure", cause))
})

export const ErrorLoggingLayer = ErrorReporter.layer([reporter])
