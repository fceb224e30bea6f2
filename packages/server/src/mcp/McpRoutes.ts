/**
 * The MCP endpoint (`/api/agent/mcp`, Streamable HTTP) on Effect's own MCP
 * server: the tools of Tools.ts with their handlers, the scope gate around
 * them, the meter of every tool call (McpMeter.ts), and the HTTP-level
 * authentication and rate limits around every request (McpAuth.ts).
 *
 * Protocols: the revision the official SDK offers first (2025-11-25), and the
 * two before it for older clients, all with sessions (`Mcp-Session-Id`). A
 * session is state in this process: on several nodes, a balancer must send a
 * session's requests to the node that initialised it (docs/mcp.md). A DELETE
 * with the session id ends the session; McpSessions.ts ties each session to
 * its token, caps them per token and ends idle ones. `AppConfig` (the public URL) comes
 * from the capabilities, as for the OAuth routes, so the 401 challenge and
 * the OAuth metadata name the same URL.
 */
import { Effect, Layer } from "effect"
import { McpProtocol, McpServer } from "effect/ai"
import serverPackage from "../../package.json" with { type: "json" }
import { AppConfig } from "../config/AppConfig.ts"
import { MCP_PATH } from "../oauth/McpScopes.ts"
import { McpHttpAuth, ScopeGate } from "./McpAuth.ts"
import { ToolMeter } from "./McpMeter.ts"
import { McpSessions } from "./McpSessions.ts"
import { ToolHandlersLayer } from "./ToolHandlers.ts"
import { HeraldTools, INSTRUCTIONS } from "./Tools.ts"

/** The protocol revisions served, newest first. */
export const MCP_PROTOCOLS = [McpProtocol.v2025_11_25, McpProtocol.v2025_06_18, McpProtocol.v2025_03_26] as const

/**
 * The tools with their handlers and scope gate, and the meter of every tool
 * call (global: it wraps every registration, McpMeter.ts). Any transport
 * serving these is metered.
 */
export const McpRegistrations = Layer.merge(
  McpServer.toolkit(HeraldTools).pipe(
    Layer.provide(ScopeGate.layer),
    Layer.provide(ToolHandlersLayer)
  ),
  ToolMeter
)

export const McpRoutes = Layer.unwrap(Effect.gen(function*() {
  const { publicUrl } = yield* AppConfig
  return McpServer.layerHttp({
    name: "herald",
    version: serverPackage.version,
    instructions: INSTRUCTIONS,
    websiteUrl: publicUrl,
    path: MCP_PATH,
    protocols: MCP_PROTOCOLS,
    // A browser-based client is let in from Herald's own origin only (DNS rebinding); clients outside a
    // browser send no Origin.
    allowedOrigins: [new URL(publicUrl).origin],
    allowSessionTermination: true,
    registrations: McpRegistrations
  })
})).pipe(Layer.provide(McpHttpAuth.layer), Layer.provide(McpSessions.capturingTermination))
