/**
 * The token endpoint (authorization code with PKCE, rotating refresh tokens)
 * and revocation (RFC 7009). Form bodies, fields read leniently and checked
 * by the server so a malformed request answers `{error, error_description}`.
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { oneTimeSecret } from "../Operation.ts"
import { OAuthError, OAuthInvalidClient } from "./Errors.ts"

const text = (description: string) => Schema.optionalKey(Schema.String.annotate({ description }))

const clientAuth = {
  client_id: text("The client's id (or send it with the secret in `Authorization: Basic`)."),
  client_secret: text("A `client_secret_post` client's secret.")
}

export const TokenRequest = Schema.Struct({
  grant_type: text("`authorization_code` or `refresh_token`."),
  code: text("The authorization code (`authorization_code`)."),
  redirect_uri: text("The redirect URI of the authorization request (`authorization_code`)."),
  code_verifier: text("The PKCE verifier: 43 to 128 characters of `[A-Za-z0-9-._~]` (`authorization_code`)."),
  refresh_token: text("The refresh token (`refresh_token`)."),
  scope: text("`refresh_token`: a subset of the grant's scopes for the new access token."),
  resource: text("When sent: the MCP endpoint."),
  ...clientAuth
}).pipe(HttpApiSchema.asFormUrlEncoded()).annotate({ identifier: "TokenRequest" })
export type TokenRequest = typeof TokenRequest.Type

export class TokenResponse extends Schema.Class<TokenResponse>("TokenResponse")({
  access_token: Schema.String,
  token_type: Schema.Literal("Bearer"),
  expires_in: Schema.Number,
  refresh_token: Schema.String,
  scope: Schema.String
}) {}

export const RevokeRequest = Schema.Struct({
  token: text("An access token (`hlo_…`) or refresh token (`hlr_…`) of the client."),
  token_type_hint: text("Ignored: the token's prefix says what it is."),
  ...clientAuth
}).pipe(HttpApiSchema.asFormUrlEncoded()).annotate({ identifier: "RevokeRequest" })
export type RevokeRequest = typeof RevokeRequest.Type

export class OAuthTokensGroup extends HttpApiGroup.make("oauthTokens")
  .add(
    HttpApiEndpoint.post("token", "/oauth/token", {
      payload: TokenRequest,
      success: TokenResponse,
      error: [OAuthError, OAuthInvalidClient]
    }).annotateMerge(OpenApi.annotations({
      summary: "Exchange a code or a refresh token",
      description: "Client authentication per the client's registered method (`none`: `client_id` in the body; " +
        "`client_secret_post`; `client_secret_basic`), else 401 `invalid_client`. `authorization_code`: the code " +
        "once, with the same `redirect_uri` and a `code_verifier` whose S256 matches the challenge; a replayed code " +
        "revokes the grant issued from it. `refresh_token`: rotates — the presented token is used up and a new pair " +
        "issued; a used refresh token presented again revokes the grant. `scope` may narrow, never widen " +
        "(`invalid_scope`). Access tokens (`hlo_…`) last 1 hour, refresh tokens (`hlr_…`) 30 days. Other grant " +
        "types: `unsupported_grant_type`."
    })).pipe(oneTimeSecret)
  )
  .add(
    HttpApiEndpoint.post("revoke", "/oauth/revoke", {
      payload: RevokeRequest,
      success: HttpApiSchema.Empty(200),
      error: [OAuthError, OAuthInvalidClient]
    }).annotateMerge(OpenApi.annotations({
      summary: "Revoke a grant",
      description: "RFC 7009. An access or refresh token of the authenticated client revokes its whole grant (the " +
        "ApiToken of kind `oauth`): every access and refresh token of it stops working at once. 200 for an unknown token."
    })).pipe(oneTimeSecret)
  )
{}
