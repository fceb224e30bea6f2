/** Agent API handlers of a team's email domain: set, clear, verify (the rules are Domains.ts). */
import { AgentApi, CurrentAgent, DnsLookupFailed, RateLimited } from "@herald/api"
import { Effect } from "effect"
import { HttpEffect, HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { reportRateLimit, seconds } from "../billing/RateLimitHeaders.ts"
import { agentActor } from "./AuditTrail.ts"
import { Domains } from "./Domains.ts"

/** The calling account, and the audit log's actor for it (token, address, user agent). */
const caller = Effect.gen(function*() {
  const agent = yield* CurrentAgent
  return { userId: agent.userId, actor: yield* agentActor }
})

/** `Retry-After` on the current request's answer. */
const retryAfter = (ms: number): Effect.Effect<void> =>
  Effect.withFiber((fiber) => {
    HttpEffect.appendPreResponseHandlerUnsafe(fiber.context, (_request, response) =>
      Effect.succeed(HttpServerResponse.setHeader(response, "retry-after", seconds(ms))))
    return Effect.void
  })

export const TeamDomainHandlers = HttpApiBuilder.group(AgentApi, "teamDomain", Effect.fn(function*(handlers) {
  const domains = yield* Domains
  return handlers
    .handle("set", ({ params, payload }) => Effect.flatMap(caller, (c) => domains.set(c.actor, c.userId, params.id, payload.domain)))
    .handle("clear", ({ params }) => Effect.flatMap(caller, (c) => domains.clear(c.actor, c.userId, params.id)))
    .handle("verify", ({ params }) =>
      Effect.flatMap(caller, (c) => domains.verify(c.actor, c.userId, params.id)).pipe(
        Effect.catchTags({
          VerifyThrottled: ({ decision }) =>
            Effect.andThen(
              reportRateLimit(decision),
              Effect.fail(new RateLimited({
                error: `Rate limit exceeded: ${decision.limit} domain verifications a minute for this team. ` +
                  `Retry after ${seconds(decision.retryAfterMs)} s.`
              }))
            ),
          LookupFailed: ({ cached, code, host, retryAfterMs }) =>
            Effect.andThen(
              retryAfter(retryAfterMs),
              Effect.fail(new DnsLookupFailed({
                error: `The DNS lookup of TXT ${host} failed (${code})${cached ? " less than a minute ago" : ""}; ` +
                  `a new lookup is made after ${seconds(retryAfterMs)} s.`
              }))
            )
        })
      ))
}))
