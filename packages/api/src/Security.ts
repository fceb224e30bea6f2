/**
 * Middleware declarations. The contract declares them (security scheme,
 * provided services, errors); the server implements them.
 */
import { Context } from "effect"
import { HttpApiMiddleware, HttpApiSecurity, OpenApi } from "effect/http-api"
import type { Scope } from "./domain/Scope.ts"
import { CommonErrors, CsrfRejected, MissingScope, RateLimited, Unauthorized } from "./errors.ts"

/**
 * The account and token a request acts as, provided by {@link AgentAuth}: the
 * token as it was authenticated, so what a handler shows of it (its name as
 * the source of what it sends, `GET /auth/status`) needs no further lookup.
 */
export interface AgentPrincipal {
  readonly userId: string
  readonly tokenId: string
  readonly tokenName: string
  readonly scopes: ReadonlyArray<Scope>
  readonly tokenPrefix: string
  readonly tokenCreatedAt: string
  readonly tokenExpiresAt: string | null
  /** The freshest use known at authentication: this request's, to the second. */
  readonly tokenLastUsedAt: string | null
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

/** The cookie a browser's Person API session travels in (HttpOnly, SameSite=Lax, Path=/). */
export const SESSION_COOKIE = "herald_session"

/** The header a cookie-authenticated change must carry (any non-empty value): a page of another origin cannot send it. */
export const CSRF_HEADER = "X-Herald-CSRF"

/**
 * A signed-in person's session (`hls_…`): `Authorization: Bearer hls_…` (the
 * phone app, scripts, the typed client), or else the `herald_session` cookie
 * a browser sign-in sets. One scheme on the wire description: the cookie is
 * read by the same middleware when no `Authorization` header is sent (two
 * schemes on one middleware would answer the last one's error, not the
 * credential's), and a cookie-authenticated POST, PUT, PATCH or DELETE must
 * carry `X-Herald-CSRF` (403 `CSRF_REJECTED` otherwise).
 */
export class PersonAuth extends HttpApiMiddleware.Service<PersonAuth, { provides: CurrentPerson }>()("herald/PersonAuth", {
  requiredForClient: true,
  security: {
    sessionToken: HttpApiSecurity.bearer.pipe(
      HttpApiSecurity.annotate(
        OpenApi.Description,
        "A person's session token (`hls_…`): sent as `Authorization: Bearer <token>` (`herald admin session create` " +
          "makes one), or, from a browser signed in by an e-mailed link or a passkey, the `herald_session` cookie. " +
          "A request authenticated by the cookie that changes something (POST, PUT, PATCH, DELETE) must send the " +
          "`X-Herald-CSRF` header (any non-empty value) and, when it sends `Origin`, Herald's public origin; " +
          "otherwise it answers 403 `CSRF_REJECTED`."
      )
    )
  },
  error: [Unauthorized, CsrfRejected]
}) {}

/**
 * Turns every request-decoding failure into `VALIDATION_FAILED` with `issues`,
 * and declares the errors any endpoint can answer (body limits, rate limits,
 * unexpected failures) so clients decode them and the docs list them.
 */
export class RequestErrors extends HttpApiMiddleware.Service<RequestErrors>()("herald/RequestErrors", {
  error: CommonErrors
}) {}
