/**
 * The MCP endpoint (`/api/agent/mcp`, Streamable HTTP) on Effect's own MCP
 * server: the tools of Tools.ts with their handlers, the scope gate around
 * them, the meter of every tool call (McpMeter.ts), and the HTTP-level
 * authentication and rate limits around every request (McpAuth.ts).
 *
 * Protocols, so that any node behind any balancer answers:
 * - `2026-07-28`, the stateless revision: every request carries what it
 *   needs (revision, client capabilities) and no session, so any node answers
 *   it. Its `subscriptions/listen` stream is off: Herald's tools never change,
 *   and a stream would hold one node for nothing.
 * - the revision the official SDK offers first (2025-11-25), and the two
 *   before it for older clients, with sessions (`Mcp-Session-Id`). A session
 *   is stored in the database and answered on any node (McpSessions.ts: a
 *   node that does not hold it resumes it, each session answers only its
 *   token, capped per token, idle ones ended). A DELETE with the session id
 *   ends the session.
 * `AppConfig` (the public URL) comes from the capabilities, as for the OAuth
 * routes, so the 401 challenge and the OAuth metadata name the same URL.
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
export const MCP_PROTOCOLS = [
  McpProtocol.v2026_07_28,
  McpProtocol.v2025_11_25,
  McpProtocol.v2025_06_18,
  McpProtocol.v2025_03_26
] as const

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
    allowSubscriptions: false,
    registrations: McpRegistrations
  })
})).pipe(Layer.provide(McpHttpAuth.layer), Layer.provide(McpSessions.capturingRoutes))
