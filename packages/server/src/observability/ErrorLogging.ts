/**
 * Unexpected failures are logged, expected ones are not. The HTTP stack hands
 * every failure of a request to the error reporters; a typed API error below
 * 500 (401, 404, a validation failure…) is an answer, not an incident, so it
 * is skipped. Defects and 5xx errors are logged at Error with their cause and
 * the request id the request's log annotations carry.
 */
import { Cause, Effect, ErrorReporter } from "effect"

const expectedStatus = (error: unknown): boolean => {
  if (typeof error !== "object" || error === null || !("code" in error)) return false
  const code = (error as { code: unknown }).code
  return typeof code === "string" && code !== "INTERNAL_ERROR" && code !== "SERVICE_UNAVAILABLE"
}

const reporter = ErrorReporter.make(({ cause, fiber }) => {
  const defect = cause.reasons.some(Cause.isDieReason)
  const failures = cause.reasons.filter(Cause.isFailReason)
  if (!defect && failures.length > 0 && failures.every((f) => expectedStatus(f.error))) return
  Effect.runForkWith(fiber.context)(Effect.logError("unexpected failure", cause))
})

export const ErrorLoggingLayer = ErrorReporter.layer([reporter])
