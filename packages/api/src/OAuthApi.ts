/**
 * Herald as an OAuth 2.1 authorization server for remote-tool clients (the
 * MCP endpoint's clients): discovery, dynamic client registration, the
 * consent page, the token and revocation endpoints. Paths are the ones the
 * RFCs and MCP clients expect (`/.well-known/…`, `/oauth/…`), so no prefix.
 * Errors answer RFC 6749's `{error, error_description}`, never Herald's
 * `{error, code}`: one schema-error transform turns a request that fails
 * decoding into `invalid_request`.
 */
import { HttpApi, HttpApiMiddleware, OpenApi } from "effect/http-api"
import { OAuthAuthorizeGroup } from "./oauth/Authorize.ts"
import { OAuthClientsGroup } from "./oauth/Clients.ts"
import { OAuthError, oauthErrorSchemasAsSent } from "./oauth/Errors.ts"
import { OAuthMetadataGroup } from "./oauth/Metadata.ts"
import { OAuthSignInGroup } from "./oauth/SignIn.ts"
import { OAuthTokensGroup } from "./oauth/Tokens.ts"

/** Turns a request that fails decoding into `invalid_request` (the OAuth shape). */
export class OAuthRequestErrors extends HttpApiMiddleware.Service<OAuthRequestErrors>()("herald/OAuthRequestErrors", {
  error: OAuthError
}) {}

export class OAuthApi extends HttpApi.make("oauth")
  .add(OAuthMetadataGroup)
  .add(OAuthClientsGroup)
  .add(OAuthAuthorizeGroup)
  .add(OAuthTokensGroup)
  .add(OAuthSignInGroup)
  .middleware(OAuthRequestErrors)
  .annotate(HttpApi.SuccessParseOptions, { disableChecks: true })
  .annotateMerge(OpenApi.annotations({
    title: "Herald OAuth 2.1 authorization server",
    version: "1.0.0",
    transform: oauthErrorSchemasAsSent,
    description: "How a remote-tool client (an MCP client) connects: discover, register, send the person to the " +
      "consent page, exchange the code (PKCE S256) and refresh. Each approved client is one ApiToken of kind `oauth`; " +
      "revoking it signs the client out. Errors answer `{error, error_description}` (RFC 6749 §5.2)."
  }))
{}
