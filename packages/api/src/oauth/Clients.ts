/**
 * Dynamic client registration (RFC 7591). The request's fields are read
 * leniently (any JSON value) and checked by the server, so every refusal
 * answers the RFC's `{error, error_description}` — never a schema error.
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { oneTimeSecret } from "../Operation.ts"
import { OAuthAccessDenied, OAuthError, OAuthInvalidToken, OAuthTemporarilyUnavailable } from "./Errors.ts"

/** Limits of a registration. */
export const OAUTH_MAX_REDIRECT_URIS = 10
export const OAUTH_MAX_URI_LENGTH = 2000
/** The sum of the redirect URIs' lengths: a client stores a few kilobytes at most, whatever it sends. */
export const OAUTH_MAX_REDIRECT_URIS_TOTAL = 4096
export const OAUTH_MAX_CLIENT_NAME = 100

const field = (description: string) => Schema.optionalKey(Schema.Unknown.annotate({ description }))

/** RFC 7591 §2 client metadata; unknown fields are ignored. */
export const RegisterClientRequest = Schema.Struct({
  redirect_uris: field(
    `1 to ${OAUTH_MAX_REDIRECT_URIS} redirect URIs, each at most ${OAUTH_MAX_URI_LENGTH} characters and ` +
      `${OAUTH_MAX_REDIRECT_URIS_TOTAL} together: https, http only for a loopback host (localhost, 127.0.0.1, [::1]), ` +
      "or a private-use scheme in reverse-domain form (RFC 8252 §7.1: `com.example.app:/cb`); no fragment. " +
      "Operating-system handler schemes (`search-ms:`, `ms-…:`, `shell:`, …) are refused."
  ),
  client_name: field(`At most ${OAUTH_MAX_CLIENT_NAME} characters; shown on the consent page.`),
  client_uri: field(`An https URL of at most ${OAUTH_MAX_URI_LENGTH} characters.`),
  grant_types: field("A subset of `authorization_code`, `refresh_token` that includes `authorization_code`."),
  response_types: field("`[\"code\"]`."),
  token_endpoint_auth_method: field(
    "`none` (a public client), `client_secret_post` or `client_secret_basic` (the RFC's default: a `client_secret` is issued)."
  ),
  scope: field("Space-separated scopes the client may ask for (every scope when absent).")
}).annotate({ identifier: "RegisterClientRequest" })
export type RegisterClientRequest = typeof RegisterClientRequest.Type

export const TokenEndpointAuthMethod = Schema.Literals(["none", "client_secret_post", "client_secret_basic"])
export type TokenEndpointAuthMethod = typeof TokenEndpointAuthMethod.Type

/** RFC 7591 §3.2.1: the registered metadata, the client id and, for a confidential client, its secret (shown once). */
export class ClientRegistered extends Schema.Class<ClientRegistered>("ClientRegistered")({
  client_id: Schema.String,
  client_id_issued_at: Schema.Number,
  client_secret: Schema.optionalKey(Schema.String),
  client_secret_expires_at: Schema.optionalKey(Schema.Number),
  client_name: Schema.String,
  client_uri: Schema.optionalKey(Schema.String),
  redirect_uris: Schema.Array(Schema.String),
  grant_types: Schema.Array(Schema.String),
  response_types: Schema.Array(Schema.String),
  token_endpoint_auth_method: TokenEndpointAuthMethod,
  scope: Schema.optionalKey(Schema.String)
}) {}

export class OAuthClientsGroup extends HttpApiGroup.make("oauthClients")
  .add(
    HttpApiEndpoint.post("register", "/oauth/register", {
      payload: RegisterClientRequest,
      success: ClientRegistered.pipe(HttpApiSchema.status(201)),
      error: [OAuthError, OAuthInvalidToken, OAuthAccessDenied, OAuthTemporarilyUnavailable]
    }).annotateMerge(OpenApi.annotations({
      summary: "Register a client",
      description: "RFC 7591 dynamic client registration: open to anyone unless the operator requires an initial " +
        "access token (`Authorization: Bearer …`, RFC 7591 §3; missing or wrong: 401 `invalid_token`) or closed it " +
        "(403 `access_denied`; the operator registers clients with `herald admin oauth-client create`). 201 with the " +
        "client's id (`ocl_…`) and, for `client_secret_post`/`client_secret_basic`, its `client_secret` (`hlc_…`, " +
        "stored hashed, shown once). 400 `invalid_redirect_uri` or `invalid_client_metadata`. 429 " +
        "`temporarily_unavailable` with `Retry-After` when registrations on the whole server exceed their rate, or " +
        "too many clients wait for a first approval. A client no person has approved is deleted after an hour " +
        "(`HERALD_OAUTH_UNAPPROVED_CLIENT_TTL_MINUTES`); an approved one once it has had no grant for 24 hours."
    })).pipe(oneTimeSecret)
  )
{}
