/**
 * The authorization endpoint: the consent page (GET) and the person's answer
 * (POST, the page's form). Both answer HTML or a redirect; the fields are
 * read leniently and checked by the server so a bad request answers the
 * page or the redirect OAuth prescribes, not a schema error.
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"

const text = (description: string) => Schema.optionalKey(Schema.String.annotate({ description }))

/** The authorization request (RFC 6749 §4.1.1, RFC 7636, RFC 8707). */
export const AuthorizeQuery = Schema.Struct({
  response_type: text("`code`."),
  client_id: text("The registered client's id."),
  redirect_uri: text("One of the client's registered redirect URIs, exactly."),
  code_challenge: text("BASE64URL(SHA-256(code_verifier)): 43 characters."),
  code_challenge_method: text("`S256` (`plain` is refused)."),
  state: text("Returned unchanged on the redirect."),
  scope: text("Space-separated scopes; the MCP tools' scopes when absent."),
  resource: text("When sent: the MCP endpoint, `<public URL>/api/agent/mcp`.")
}).annotate({ identifier: "AuthorizeQuery" })
export type AuthorizeQuery = typeof AuthorizeQuery.Type

/** The consent page's form: the request again, its CSRF token, the decision and the scopes left checked. */
export const ConsentForm = Schema.Struct({
  ...AuthorizeQuery.fields,
  csrf_token: text("The page's CSRF token."),
  decision: text("`approve` or `deny`."),
  grant_scope: Schema.optionalKey(Schema.Array(Schema.String).annotate({ description: "The scopes left checked." }))
}).pipe(HttpApiSchema.asFormUrlEncoded()).annotate({ identifier: "ConsentForm" })
export type ConsentForm = typeof ConsentForm.Type

const Html = Schema.String.pipe(HttpApiSchema.asText({ contentType: "text/html" })).annotate({ description: "An HTML page." })

export class OAuthAuthorizeGroup extends HttpApiGroup.make("oauthAuthorize")
  .add(
    HttpApiEndpoint.get("authorize", "/oauth/authorize", {
      query: AuthorizeQuery,
      success: Html
    }).annotateMerge(OpenApi.annotations({
      summary: "Consent page",
      description: "For a browser. An unknown client or a redirect URI it did not register answers an HTML error page " +
        "(400), never a redirect. Other problems redirect (302) to the redirect URI with `error`, " +
        "`error_description`, `state` and `iss` only for a trusted client — one a person approved before or the " +
        "operator registered (RFC 9700 §4.11.2); for any other client they answer the HTML error page (400): " +
        "`unsupported_response_type`, `invalid_request` (no `code_challenge`, " +
        "a method other than `S256`), `invalid_scope`, `invalid_target` (a `resource` other than the MCP endpoint). " +
        "No signed-in person (the `herald_session` cookie a one-time sign-in link sets, or a bearer `hls_…` session): " +
        "a page explaining how to sign in. Otherwise the consent page: the client, the person, one checkbox per " +
        "requested scope, Approve and Deny."
    }))
  )
  .add(
    HttpApiEndpoint.post("decide", "/oauth/authorize", {
      payload: ConsentForm,
      success: Html
    }).annotateMerge(OpenApi.annotations({
      summary: "Approve or deny",
      description: "The consent page's form. The request, the session and the CSRF token are checked again (a " +
        "mismatch answers 403). Deny redirects with `error=access_denied`; Approve with the checked scopes (a subset " +
        "of those requested; none checked is a denial) redirects with a one-time `code` (`hla_…`, 5 minutes), " +
        "`state` and `iss`."
    }))
  )
{}
