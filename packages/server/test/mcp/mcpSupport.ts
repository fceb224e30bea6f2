/**
 * The official MCP TypeScript SDK as the client of the in-process server:
 * `Client` over `StreamableHTTPClientTransport` with the token as a bearer
 * header, closed with the test's scope; and the reading of a tool result.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Effect } from "effect"
import { TestServer } from "../../../../test/support/server.ts"

export const MCP_URL_PATH = "/api/agent/mcp"

export interface Connected {
  readonly client: Client
  readonly transport: StreamableHTTPClientTransport
}

/** A connected SDK client (initialize done, tools listed) sending `Authorization: Bearer <secret>`; closed when the scope ends. */
export const connect = (secret: string) =>
  Effect.acquireRelease(
    Effect.flatMap(TestServer, ({ baseUrl }) =>
      Effect.promise(async (): Promise<Connected> => {
        const client = new Client({ name: "herald-test", version: "1.0.0" })
        const transport = new StreamableHTTPClientTransport(new URL(`${baseUrl}${MCP_URL_PATH}`), {
          requestInit: { headers: { Authorization: `Bearer ${secret}` } }
        })
        await client.connect(transport)
        // Listing caches each tool's outputSchema: the SDK then checks every structured result against it.
        await client.listTools()
        return { client, transport }
      })),
    ({ client }) => Effect.promise(() => client.close())
  )

/** What a tool call answered: `isError`, its text content (and that text as JSON, when it is), and its structured content. */
export interface ToolAnswer {
  readonly isError: boolean
  readonly text: string | undefined
  readonly json: any
  readonly structured: any
}

const jsonOf = (text: string | undefined): unknown => {
  if (text === undefined) return undefined
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** Calls a tool; a JSON-RPC error (the SDK throws it) fails the effect with the SDK's error. */
export const callTool = (connected: Connected, name: string, args: Record<string, unknown> = {}) =>
  Effect.tryPromise({
    try: async (): Promise<ToolAnswer> => {
      const result = await connected.client.callTool({ name, arguments: args })
      const content = result.content as ReadonlyArray<{ type: string; text?: string }>
      const text = content.find((c) => c.type === "text")?.text
      return { isError: result.isError === true, text, json: jsonOf(text), structured: result.structuredContent }
    },
    catch: (error) => error as { readonly code?: number; readonly message: string; readonly data?: unknown }
  })

/** The names of the tools the client is offered, sorted. */
export const toolNamesOf = (connected: Connected) =>
  Effect.promise(() => connected.client.listTools()).pipe(Effect.map((r) => r.tools.map((t) => t.name).sort()))
