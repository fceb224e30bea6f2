/**
 * The Agent API's bearer middleware: authenticates the `hld_…` token, checks
 * the scopes the guarded endpoint declares (`RequiredScopes`, listing every
 * missing one in a 403 `MISSING_SCOPE`), then takes the request from the
 * token's rate limits (429 `RATE_LIMITED` when over). Every answer carries
 * the `RateLimit-*` headers of the tighter limit that applies. Only then is
 * the body read and guarded (http/BodyGuard.ts): no work for a caller that is
 * not let in.
 */
import { AgentAuth, CurrentAgent, MissingScope, RateLimited, RequiredScopes, SendingOperation } from "@herald/api"
import { Clock, Context, Effect, Layer, Redacted } from "effect"
import { HttpServerRequest } from "effect/http"
import type { HttpServerResponse } from "effect/http"
import type { unhandled } from "effect/Types"
import { RateLimiter } from "../billing/RateLimiter.ts"
import { appendRateLimitHeadersUnsafe, seconds } from "../billing/RateLimitHeaders.ts"
import { guardBody } from "../http/BodyGuard.ts"
import { Credentials } from "./Credentials.ts"

export const AgentAuthLive = Layer.effect(AgentAuth, Effect.gen(function*() {
  const credentials = yield* Credentials
  const limiter = yield* RateLimiter
  return AgentAuth.of({
    // Every agent request passes here: plain `flatMap`, no generator.
    agentToken: (httpEffect, { credential, endpoint }) =>
      Effect.flatMap(credentials.authenticateToken(Redacted.value(credential)), (token): Effect.Effect<HttpServerResponse.HttpServerResponse, MissingScope | RateLimited | unhandled> => {
        const required = Context.getOrUndefined(endpoint.annotations, RequiredScopes) ?? []
        const missing = required.filter((scope) => !token.scopes.includes(scope))
        if (missing.length > 0) {
          return Effect.fail(new MissingScope({ error: `The token lacks scopes: ${missing.join(", ")}.`, required: missing }))
        }
        return Effect.withFiber((fiber): Effect.Effect<HttpServerResponse.HttpServerResponse, RateLimited | unhandled> => {
          const sends = Context.getOrUndefined(endpoint.annotations, SendingOperation) === true
          // On PostgreSQL the budgets are shared by every node: one statement (billing/SharedRateLimits.ts).
          const now = fiber.getRef(Clock.Clock).currentTimeMillisUnsafe()
          return Effect.flatMap(limiter.take(token.id, sends, now), (outcome): Effect.Effect<HttpServerResponse.HttpServerResponse, RateLimited | unhandled> => {
            if (outcome.reported !== undefined) appendRateLimitHeadersUnsafe(fiber.context, outcome.reported)
            if (!outcome.allowed) {
              return Effect.fail(new RateLimited({
                error: `Rate limit exceeded: ${outcome.reported!.limit} ${sends ? "sends" : "requests"} a minute for this token. ` +
                  `Retry after ${seconds(outcome.reported!.retryAfterMs)} s.`
              }))
            }
            const request = Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest)
            return Effect.provideService(guardBody(request, httpEffect), CurrentAgent, { userId: token.userId, tokenId: token.id, scopes: token.scopes })
          })
        })
      })
  })
}))
