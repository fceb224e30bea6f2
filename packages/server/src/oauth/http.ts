/**
 * Handlers of the OAuth routes (OAuthApi): the discovery documents, client
 * registration, the authorization endpoint (HTML or redirects) and the
 * token and revocation endpoints. Registration, token and revocation answers
 * are `Cache-Control: no-store` (RFC 6749 §5.1), errors included: their
 * endpoints are `OneTimeSecret`, which the edge reads (http/Edge.ts). The
 * sign-in route is signInHttp.ts.
 */
import {
  AuthorizationServerMetadata,
  OAuthApi,
  oauthError,
  OAuthRequestErrors,
  OAuthTemporarilyUnavailable,
  ProtectedResourceMetadata,
  Scopes
} from "@herald/api"
import { Effect } from "effect"
import { HttpEffect, HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiBuilder, HttpApiMiddleware } from "effect/http-api"
import { issuesOf } from "../http/RequestErrors.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { OAuthConfig } from "../config/OAuthConfig.ts"
import { Authorization } from "./Authorization.ts"
import { signedIn } from "./BrowserSession.ts"
import { Credentials } from "../auth/Credentials.ts"
import { MCP_PATH, MCP_SCOPES } from "./McpScopes.ts"
import { OAuthClients } from "./OAuthClients.ts"
import { Tokens } from "./Tokens.ts"

export const OAuthMetadataHandlers = HttpApiBuilder.group(OAuthApi, "oauthMetadata", Effect.fn(function*(handlers) {
  const { publicUrl } = yield* AppConfig
  const { registration } = yield* OAuthConfig
  const server = new AuthorizationServerMetadata({
    issuer: publicUrl,
    authorization_endpoint: `${publicUrl}/oauth/authorize`,
    token_endpoint: `${publicUrl}/oauth/token`,
    // Closed: no client should try (RFC 8414 §2 makes it optional). Token mode still lists it: RFC 7591 §3.
    ...(registration === "closed" ? {} : { registration_endpoint: `${publicUrl}/oauth/register` }),
    revocation_endpoint: `${publicUrl}/oauth/revoke`,
    response_types_supported: ["code"],
    response_modes_supported: ["query"],
    grant_types_supported: ["authorization_code", "refresh_token"],
    code_challenge_methods_supported: ["S256"],
    token_endpoint_auth_methods_supported: ["none", "client_secret_post", "client_secret_basic"],
    revocation_endpoint_auth_methods_supported: ["none", "client_secret_post", "client_secret_basic"],
    scopes_supported: [...Scopes],
    authorization_response_iss_parameter_supported: true,
    service_documentation: `${publicUrl}/api/agent/docs`
  })
  const resource = new ProtectedResourceMetadata({
    resource: `${publicUrl}${MCP_PATH}`,
    authorization_servers: [publicUrl],
    scopes_supported: [...MCP_SCOPES],
    bearer_methods_supported: ["header"],
    resource_name: "Herald MCP server",
    resource_documentation: `${publicUrl}/api/agent/docs`
  })
  return handlers
    .handle("authorizationServer", () => Effect.succeed(server))
    .handle("protectedResource", () => Effect.succeed(resource))
}))

/** A header on this request's answer, whatever it is (errors included). */
const answerHeader = (name: string, value: string): Effect.Effect<void> =>
  Effect.withFiber((fiber) => {
    HttpEffect.appendPreResponseHandlerUnsafe(fiber.context, (_request, response) => Effect.succeed(HttpServerResponse.setHeader(response, name, value)))
    return Effect.void
  })

export const OAuthClientsHandlers = HttpApiBuilder.group(OAuthApi, "oauthClients", Effect.fn(function*(handlers) {
  const clients = yield* OAuthClients
  return handlers.handle("register", ({ payload, request }) => {
    const authorization = request.headers["authorization"]
    return clients.register(payload, authorization).pipe(
      Effect.catchTags({
        // RFC 6585 §4 / RFC 9110 §10.2.3: how long to wait, in seconds.
        RegistrationThrottled: (e) =>
          Effect.andThen(
            answerHeader("retry-after", String(e.retryAfterSeconds)),
            Effect.fail(new OAuthTemporarilyUnavailable({ error: "temporarily_unavailable", error_description: e.description }))
          ),
        // RFC 6750 §3.1: a challenge; its error code only when a token was sent (none: the client did not know).
        OAuthInvalidToken: (e) =>
          Effect.andThen(
            answerHeader(
              "www-authenticate",
              authorization === undefined ? "Bearer realm=\"herald\"" : "Bearer realm=\"herald\", error=\"invalid_token\""
            ),
            Effect.fail(e)
          )
      })
    )
  })
}))

export const OAuthAuthorizeHandlers = HttpApiBuilder.group(OAuthApi, "oauthAuthorize", Effect.fn(function*(handlers) {
  const authorization = yield* Authorization
  const credentials = yield* Credentials
  const session = (request: HttpServerRequest.HttpServerRequest) => Effect.provideService(signedIn(request), Credentials, credentials)
  return handlers
    .handle("authorize", ({ query, request }) =>
      Effect.flatMap(session(request), (who) => authorization.show(query, who, request.url)))
    .handle("decide", ({ payload, request }) =>
      Effect.flatMap(session(request), (who) => authorization.decide(payload, who)))
}))

/**
 * RFC 6749 §5.2: a client that tried `Authorization: Basic` and failed is
 * answered 401 with a `WWW-Authenticate` challenge for that scheme.
 */
const challengeBasic = (request: HttpServerRequest.HttpServerRequest) =>
<A, E extends { readonly _tag: string }, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.tapError(effect, (error) => {
    if (error._tag !== "OAuthInvalidClient" || !/^Basic\s/i.test(request.headers["authorization"] ?? "")) return Effect.void
    return Effect.withFiber<void>((fiber) => {
      HttpEffect.appendPreResponseHandlerUnsafe(fiber.context, (_request, response) =>
        Effect.succeed(HttpServerResponse.setHeader(response, "www-authenticate", "Basic realm=\"herald\"")))
      return Effect.void
    })
  })

/** What the token and revocation endpoints read to authenticate the client. */
const credentialsOf = (request: HttpServerRequest.HttpServerRequest, body: { client_id?: string; client_secret?: string }) => ({
  clientId: body.client_id,
  clientSecret: body.client_secret,
  authorization: request.headers["authorization"]
})

export const OAuthTokensHandlers = HttpApiBuilder.group(OAuthApi, "oauthTokens", Effect.fn(function*(handlers) {
  const clients = yield* OAuthClients
  const tokens = yield* Tokens
  return handlers
    .handle("token", ({ payload, request }) =>
      clients.authenticate(credentialsOf(request, payload)).pipe(
        Effect.flatMap((client) => tokens.exchange(client, payload)),
        challengeBasic(request)
      ))
    .handle("revoke", ({ payload, request }) =>
      Effect.gen(function*() {
        const client = yield* clients.authenticate(credentialsOf(request, payload))
        if (payload.token !== undefined && payload.token.length <= 200) yield* tokens.revoke(client, payload.token)
      }).pipe(challengeBasic(request)))
}))

/** A request that fails decoding (a repeated field, a body that is not a form) answers `invalid_request`. */
export const OAuthRequestErrorsLive = HttpApiMiddleware.layerSchemaErrorTransform(OAuthRequestErrors, (error) =>
  error.kind === "ResponseHeaders"
    ? Effect.die(error.cause)
    : Effect.fail(oauthError("invalid_request", `The request could not be read: ${issuesOf(error).map((i) => `${i.path}: ${i.message}`).join("; ")}`)))
