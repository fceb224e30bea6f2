/**
 * The rate-limit headers of an answer (`RateLimit-Limit`, `-Remaining`,
 * `-Reset`, and `Retry-After` when refused), added to the response of the
 * request whose fiber calls it.
 */
import { Effect } from "effect"
import type { Context } from "effect"
import { HttpEffect, HttpServerResponse } from "effect/http"
import type { Decision } from "./Gcra.ts"

/** Whole seconds, rounded up, never negative. */
export const seconds = (ms: number) => String(Math.max(0, Math.ceil(ms / 1000)))

const headersOf = (decision: Decision) =>
(_request: unknown, response: HttpServerResponse.HttpServerResponse) =>
  Effect.succeed(HttpServerResponse.setHeaders(response, {
    "ratelimit-limit": String(decision.limit),
    "ratelimit-remaining": String(decision.remaining),
    "ratelimit-reset": seconds(decision.resetMs),
    ...(decision.allowed ? {} : { "retry-after": seconds(decision.retryAfterMs) })
  }))

/** Adds the headers of `decision` to the answer of the request `context` belongs to (a synchronous step). */
export const appendRateLimitHeadersUnsafe = (context: Context.Context<never>, decision: Decision): void =>
  HttpEffect.appendPreResponseHandlerUnsafe(context, headersOf(decision))

/** Adds the headers of `decision` to the current request's answer. */
export const reportRateLimit = (decision: Decision): Effect.Effect<void> =>
  Effect.withFiber((fiber) => {
    appendRateLimitHeadersUnsafe(fiber.context, decision)
    return Effect.void
  })
