/**
 * The Agent API's bearer middleware: the bearer gate (BearerGate.ts) with the
 * scopes the guarded endpoint declares (`RequiredScopes`; 403 `MISSING_SCOPE`
 * listing every missing one) and one request, or one send for a
 * `SendingOperation`, from the token's rate limits (429 `RATE_LIMITED` when
 * over). Every answer carries the `RateLimit-*` headers of the tighter limit
 * that applies. Only then is the body read and guarded (http/BodyGuard.ts):
 * no work for a caller that is not let in.
 */
import { AgentAuth, CurrentAgent, RateLimited, RequiredScopes, SendingOperation } from "@herald/api"
import { Context, Effect, Layer, Redacted } from "effect"
import { HttpServerRequest } from "effect/http"
import { seconds } from "../billing/RateLimitHeaders.ts"
import { guardBody } from "../http/BodyGuard.ts"
import { makeBearerGate } from "./BearerGate.ts"
import type { GateRefusal } from "./BearerGate.ts"

// Built once: the hot path allocates no demand.
const oneRequest = Effect.succeed({ units: { requests: 1, sends: 0 } })
const oneSend = Effect.succeed({ units: { requests: 1, sends: 1 } })

const refusal = (sends: boolean) => (e: GateRefusal) =>
  e._tag !== "OverRateLimit" ? e : new RateLimited({
    error: `Rate limit exceeded: ${e.outcome.reported!.limit} ${sends ? "sends" : "requests"} a minute for this token. ` +
      `Retry after ${seconds(e.outcome.reported!.retryAfterMs)} s.`
  })
const refusals = { request: refusal(false), send: refusal(true) }

export const AgentAuthLive = Layer.effect(AgentAuth, Effect.gen(function*() {
  const gate = yield* makeBearerGate
  return AgentAuth.of({
    // Every agent request passes here: plain `flatMap`, no generator.
    agentToken: (httpEffect, { credential, endpoint }) => {
      const required = Context.getOrUndefined(endpoint.annotations, RequiredScopes) ?? []
      const sends = Context.getOrUndefined(endpoint.annotations, SendingOperation) === true
      return Effect.flatMap(
        Effect.mapError(gate.pass(Redacted.value(credential), required, sends ? oneSend : oneRequest), sends ? refusals.send : refusals.request),
        ({ agent }) =>
          Effect.withFiber((fiber) => {
            const request = Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest)
            return Effect.provideService(guardBody(request, httpEffect), CurrentAgent, agent)
          })
      )
    }
  })
}))
