/**
 * The one gate of a bearer request, shared by the Agent API (AgentAuthLive.ts)
 * and the MCP endpoint (mcp/McpAuth.ts), each mapping its outcome to its
 * protocol. In this order, stopping at the first refusal:
 *
 * 1. Authenticate the API token (or OAuth access token): `Unauthorized`.
 * 2. Check the scopes the caller requires, naming every missing one: `MissingScope`.
 * 3. Read the demand (what the request costs; MCP's is in its body, so the
 *    body is read only once the bearer passed) and take it from the token's
 *    rate limits, all or none: `OverRateLimit`. The answer carries the
 *    `RateLimit-*` headers of the tighter limit that applies, refused or not.
 *
 * Admitted, the request runs as `agent`: the token as it was authenticated.
 */
import { MissingScope } from "@herald/api"
import type { AgentPrincipal, Scope, Unauthorized } from "@herald/api"
import { Clock, Data, Effect } from "effect"
import { RateLimiter } from "../billing/RateLimiter.ts"
import type { Decision, RateLimitOutcome, Units } from "../billing/RateLimiter.ts"
import { appendRateLimitHeadersUnsafe } from "../billing/RateLimitHeaders.ts"
import { Credentials } from "./Credentials.ts"
import type { Credential } from "./Credentials.ts"

/** Over a rate limit: the outcome (which limit refused, when to retry) and the units asked. */
export class OverRateLimit extends Data.TaggedError("OverRateLimit")<{
  readonly outcome: RateLimitOutcome
  readonly units: Units
}> {}

export type GateRefusal = Unauthorized | MissingScope | OverRateLimit

/** What a request costs, with whatever else the caller read to know it (MCP: its body). */
export interface Demand {
  readonly units: Units
}

export interface Admitted<A extends Demand> {
  readonly agent: AgentPrincipal
  /** The tighter limit that applies, as its headers report it (undefined when both are off). */
  readonly reported: Decision | undefined
  readonly demand: A
}

/** The principal a request runs as: the token as it was authenticated. */
export const principalOf = (token: Credential): AgentPrincipal => ({
  userId: token.userId,
  tokenId: token.id,
  tokenName: token.name,
  scopes: token.scopes,
  tokenPrefix: token.prefix,
  tokenCreatedAt: token.createdAt,
  tokenExpiresAt: token.expiresAt,
  tokenLastUsedAt: token.lastUsedAt
})

export interface BearerGate {
  readonly pass: <A extends Demand, R>(
    bearer: string,
    required: ReadonlyArray<Scope>,
    demand: Effect.Effect<A, never, R>
  ) => Effect.Effect<Admitted<A>, GateRefusal, R>
}

/** The gate over this process's credentials and rate limiter (each face builds it once, with its layer). */
export const makeBearerGate: Effect.Effect<BearerGate, never, Credentials | RateLimiter> = Effect.gen(function*() {
  const credentials = yield* Credentials
  const limiter = yield* RateLimiter
  // Every agent request passes here: plain `flatMap`, no generator.
  const pass = <A extends Demand, R>(bearer: string, required: ReadonlyArray<Scope>, demand: Effect.Effect<A, never, R>) =>
    Effect.flatMap(credentials.authenticateToken(bearer), (token): Effect.Effect<Admitted<A>, GateRefusal, R> => {
      const missing = required.filter((scope) => !token.scopes.includes(scope))
      if (missing.length > 0) {
        return Effect.fail(new MissingScope({ error: `The token lacks scopes: ${missing.join(", ")}.`, required: missing }))
      }
      return Effect.flatMap(demand, (asked) =>
        Effect.withFiber((fiber) => {
          const now = fiber.getRef(Clock.Clock).currentTimeMillisUnsafe()
          // On PostgreSQL the budgets are shared by every node: one statement (billing/SharedRateLimits.ts).
          return Effect.flatMap(limiter.takeUnits(token.id, asked.units, now), (outcome) => {
            if (outcome.reported !== undefined) appendRateLimitHeadersUnsafe(fiber.context, outcome.reported)
            if (!outcome.allowed) return Effect.fail(new OverRateLimit({ outcome, units: asked.units }))
            return Effect.succeed({ agent: principalOf(token), reported: outcome.reported, demand: asked })
          })
        }))
    })
  return { pass }
})
