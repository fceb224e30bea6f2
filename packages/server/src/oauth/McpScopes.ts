/**
 * The scopes the MCP tools use (mcp/): what an MCP client asks for when it
 * knows nothing else — the `scope` of the MCP endpoint's 401 challenge and
 * the protected-resource metadata's `scopes_supported`. The person still
 * picks the scopes on the consent page.
 */
import type { Scope } from "@herald/api"

export const MCP_SCOPES: ReadonlyArray<Scope> = [
  "notifications:send",
  "interactions:create",
  "interactions:read",
  "activities:write",
  "oncall:write",
  "inbox:read"
]

/** The MCP endpoint's path, the protected resource of the OAuth metadata. */
export const MCP_PATH = "/api/agent/mcp"

/** The protected-resource metadata document of the MCP endpoint (RFC 9728: the resource path appended). */
export const MCP_RESOURCE_METADATA_PATH = "/.well-known/oauth-protected-resource/api/agent/mcp"
