/**
 * The discovery documents: the authorization server's metadata (RFC 8414)
 * and the MCP endpoint's protected-resource metadata (RFC 9728), which an
 * MCP client reads after the endpoint's 401 to find where to register and
 * sign in.
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"

export class AuthorizationServerMetadata extends Schema.Class<AuthorizationServerMetadata>("AuthorizationServerMetadata")({
  issuer: Schema.String,
  authorization_endpoint: Schema.String,
  token_endpoint: Schema.String,
  /** Absent when the operator closed registration (RFC 8414 §2: OPTIONAL). */
  registration_endpoint: Schema.optionalKey(Schema.String),
  revocation_endpoint: Schema.String,
  response_types_supported: Schema.Array(Schema.String),
  response_modes_supported: Schema.Array(Schema.String),
  grant_types_supported: Schema.Array(Schema.String),
  code_challenge_methods_supported: Schema.Array(Schema.String),
  token_endpoint_auth_methods_supported: Schema.Array(Schema.String),
  revocation_endpoint_auth_methods_supported: Schema.Array(Schema.String),
  scopes_supported: Schema.Array(Schema.String),
  authorization_response_iss_parameter_supported: Schema.Boolean,
  service_documentation: Schema.String
}) {}

export class ProtectedResourceMetadata extends Schema.Class<ProtectedResourceMetadata>("ProtectedResourceMetadata")({
  resource: Schema.String,
  authorization_servers: Schema.Array(Schema.String),
  scopes_supported: Schema.Array(Schema.String),
  bearer_methods_supported: Schema.Array(Schema.String),
  resource_name: Schema.String,
  resource_documentation: Schema.String
}) {}

export class OAuthMetadataGroup extends HttpApiGroup.make("oauthMetadata")
  .add(
    HttpApiEndpoint.get("authorizationServer", "/.well-known/oauth-authorization-server", {
      success: AuthorizationServerMetadata
    }).annotateMerge(OpenApi.annotations({
      summary: "Authorization server metadata",
      description: "RFC 8414: the issuer (`HERALD_PUBLIC_URL`), its endpoints (`registration_endpoint` only while client " +
        "registration is not closed), `code` with PKCE `S256` only, the " +
        "grant types `authorization_code` and `refresh_token`, the client authentication methods and every scope."
    }))
  )
  .add(
    HttpApiEndpoint.get("protectedResource", "/.well-known/oauth-protected-resource/api/agent/mcp", {
      success: ProtectedResourceMetadata
    }).annotateMerge(OpenApi.annotations({
      summary: "MCP endpoint protected-resource metadata",
      description: "RFC 9728: the MCP endpoint `/api/agent/mcp` as a protected resource, its authorization server " +
        "(this server) and the scopes its tools use. The endpoint's 401 points here."
    }))
  )
{}
