/**
 * Middleware declarations. The contract declares them (security scheme,
 * provided services, errors); the server implements them.
 */
import { Context } from "effect"
import { HttpApiMiddleware, HttpApiSecurity, OpenApi } from "effect/http-api"
import type { Scope } from "./domain/Scope.ts"
import { CommonErrors, MissingScope, RateLimited, Unauthorized } from "./errors.ts"

/** The account and token a request acts as, provided by {@link AgentAuth}. */
export interface AgentPrincipal {
  readonly userId: string
  readonly tokenId: string
  readonly scopes: ReadonlyArray<Scope>
}
export class CurrentAgent extends Context.Service<CurrentAgent, AgentPrincipal>()("herald/CurrentAgent") {}

/** The signed-in person a Person API request acts as, provided by {@link PersonAuth}. */
export interface PersonPrincipal {
  readonly userId: string
  readonly sessionId: string
}
export class CurrentPerson extends Context.Service<CurrentPerson, PersonPrincipal>()("herald/CurrentPerson") {}

/** Bearer API token (`hld_…`) with the scopes the endpoint's `RequiredScopes` names. */
export class AgentAuth extends HttpApiMiddleware.Service<AgentAuth, { provides: CurrentAgent }>()("herald/AgentAuth", {
  requiredForClient: true,
  security: {
    agentToken: HttpApiSecurity.bearer.pipe(
      HttpApiSecurity.annotate(OpenApi.Description, "An API token (`hld_…`) created in the Person API. Send `Authorization: Bearer <token>`.")
    )
  },
  // Every agent request is also subject to the token's rate limits.
  error: [Unauthorized, MissingScope, RateLimited]
}) {}

/** Bearer session token (`hls_…`) of a signed-in person. */
export class PersonAuth extends HttpApiMiddleware.Service<PersonAuth, { provides: CurrentPerson }>()("herald/PersonAuth", {
  requiredForClient: true,
  security: {
    sessionToken: HttpApiSecurity.bearer.pipe(
      HttpApiSecurity.annotate(OpenApi.Description, "A person's session token (`hls_…`), created by `herald admin session create`.")
    )
  },
  error: Unauthorized
}) {}

/**
 * Turns every request-decoding failure into `VALIDATION_FAILED` with `issues`,
 * and declares the errors any endpoint can answer (body limits, rate limits,
 * unexpected failures) so clients decode them and the docs list them.
 */
export class RequestErrors extends HttpApiMiddleware.Service<RequestErrors>()("herald/RequestErrors", {
  error: CommonErrors
}) {}
