/**
 * The error bodies of the OAuth routes: RFC 6749 §5.2 `{error,
 * error_description}`, never Herald's `{error, code}`, because OAuth clients
 * (the MCP SDK among them) read exactly these fields. `error` is the RFC's
 * code (`invalid_grant`, `invalid_client`, …). `_tag` stays off the wire.
 */
import { Schema } from "effect"

const body = <const Tag extends string>(tag: Tag) => ({
  _tag: Schema.tagDefaultOmit(tag),
  error: Schema.String,
  error_description: Schema.optionalKey(Schema.String)
})

/** 400: the request is refused (`invalid_request`, `invalid_grant`, `invalid_scope`, `invalid_redirect_uri`, …). */
export class OAuthError extends Schema.Error<OAuthError>("OAuthError")({
  ...body("OAuthError")
}, {
  httpApiStatus: 400,
  description: "An OAuth error (RFC 6749 §5.2, RFC 7591 §3.2.2): `{error, error_description}`."
}) {}

/** 401: client authentication failed (`invalid_client`). */
export class OAuthInvalidClient extends Schema.Error<OAuthInvalidClient>("OAuthInvalidClient")({
  ...body("OAuthInvalidClient")
}, {
  httpApiStatus: 401,
  description: "Client authentication failed (`invalid_client`)."
}) {}

/**
 * 401 at registration when it needs an initial access token (RFC 7591 §3,
 * RFC 6750 §3.1): `invalid_token`, with a `WWW-Authenticate: Bearer` challenge.
 */
export class OAuthInvalidToken extends Schema.Error<OAuthInvalidToken>("OAuthInvalidToken")({
  ...body("OAuthInvalidToken")
}, {
  httpApiStatus: 401,
  description: "A missing or wrong initial access token (`invalid_token`)."
}) {}

/** 403: the operator closed the endpoint (`access_denied`). */
export class OAuthAccessDenied extends Schema.Error<OAuthAccessDenied>("OAuthAccessDenied")({
  ...body("OAuthAccessDenied")
}, {
  httpApiStatus: 403,
  description: "Refused by the server's configuration (`access_denied`)."
}) {}

/** 429: the server's bound is reached (`temporarily_unavailable`), with `Retry-After`. */
export class OAuthTemporarilyUnavailable extends Schema.Error<OAuthTemporarilyUnavailable>("OAuthTemporarilyUnavailable")({
  ...body("OAuthTemporarilyUnavailable")
}, {
  httpApiStatus: 429,
  description: "Too many at once (`temporarily_unavailable`); retry after the `Retry-After` seconds."
}) {}

/** The OAuth error codes Herald answers. */
export type OAuthErrorCode =
  | "invalid_request"
  | "invalid_client"
  | "invalid_grant"
  | "unauthorized_client"
  | "unsupported_grant_type"
  | "invalid_scope"
  | "invalid_target"
  | "access_denied"
  | "unsupported_response_type"
  | "invalid_redirect_uri"
  | "invalid_client_metadata"
  | "invalid_token"
  | "temporarily_unavailable"

export const oauthError = (error: OAuthErrorCode, description: string) =>
  new OAuthError({ error, error_description: description })

/** The OpenAPI transform of the OAuth document: `_tag` off the OAuth error bodies, as on the wire. */
export const oauthErrorSchemasAsSent = (spec: Record<string, any>): Record<string, any> => {
  const schemas: Record<string, { properties?: Record<string, unknown>; required?: Array<string> }> = spec.components?.schemas ?? {}
  for (const schema of Object.values(schemas)) {
    const properties = schema.properties
    if (properties === undefined || !("_tag" in properties) || !("error_description" in properties)) continue
    delete properties._tag
    if (schema.required !== undefined) schema.required = schema.required.filter((key) => key !== "_tag")
  }
  return spec
}
