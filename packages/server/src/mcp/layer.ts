/** MCP (mcp/): the sessions this node holds and their stored copies. */
import { McpSessions } from "./McpSessions.ts"

export const McpLayer = McpSessions.layer
