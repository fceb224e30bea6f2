/**
 * Which Agent API operation each MCP tool mirrors, and what follows from it:
 * the scopes a tool needs and whether a call counts as a send are read from
 * the mirrored endpoints' own annotations (`RequiredScopes`,
 * `SendingOperation`), never retyped, so a tool and its route cannot drift
 * apart. A test checks every tool has its routes.
 */
import { AgentApi, RequiredScopes, SendingOperation } from "@herald/api"
import type { Scope } from "@herald/api"
import { Context } from "effect"
import { HttpApi } from "effect/http-api"

/** An Agent API endpoint as `group.endpoint` (`notifications.create`). */
type EndpointRef = `${string}.${string}`

/**
 * Each tool's endpoints. `progress` mirrors three, one per `action`; the
 * others one. Tool names are the ones an agent sees.
 */
export const toolRoutes = {
  notify: { default: "notifications.create" },
  ask: { default: "interactions.create" },
  wait: { default: "interactions.wait" },
  cancel: { default: "interactions.cancel" },
  progress: { start: "activities.start", update: "activities.update", end: "activities.end" },
  page: { default: "pages.create" },
  inbox: { default: "inbox.list" }
} as const satisfies Record<string, Record<string, EndpointRef>>

export type ToolName = keyof typeof toolRoutes

export const toolNames = Object.keys(toolRoutes) as ReadonlyArray<ToolName>

interface EndpointFacts {
  readonly method: string
  readonly path: string
  readonly scopes: ReadonlyArray<Scope>
  readonly sends: boolean
}

/** The annotations of every Agent API endpoint, by `group.endpoint`. */
const endpoints: ReadonlyMap<string, EndpointFacts> = (() => {
  const found = new Map<string, EndpointFacts>()
  HttpApi.reflect(AgentApi, {
    onGroup() {},
    onEndpoint({ endpoint, group, mergedAnnotations }) {
      found.set(`${group.identifier}.${endpoint.identifier}`, {
        method: endpoint.method,
        path: endpoint.path,
        scopes: Context.getOrUndefined(mergedAnnotations, RequiredScopes) ?? [],
        sends: Context.getOrUndefined(mergedAnnotations, SendingOperation) === true
      })
    }
  })
  return found
})()

/** The facts of an endpoint a tool mirrors; a missing one is a programming error caught at start. */
export const endpointOf = (ref: EndpointRef): EndpointFacts => {
  const facts = endpoints.get(ref)
  if (facts === undefined) throw new Error(`MCP tool mirrors an unknown Agent API endpoint: ${ref}`)
  return facts
}

/** Every scope a tool needs: the union of its endpoints' (a token without one of them does not see the tool). */
export const toolScopes: ReadonlyMap<string, ReadonlyArray<Scope>> = new Map(
  toolNames.map((name) => [
    name,
    [...new Set(Object.values(toolRoutes[name] as Record<string, EndpointRef>).flatMap((ref) => endpointOf(ref).scopes))]
  ])
)

/** The scopes the token lacks for a tool (none for a name that is no tool: it is not served either). */
export const missingScopes = (tool: string, granted: ReadonlyArray<Scope>): ReadonlyArray<Scope> =>
  (toolScopes.get(tool) ?? []).filter((scope) => !granted.includes(scope))

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** Whether one JSON-RPC message is a `tools/call` of a sending operation (`progress` by its `action`). */
const sendsOne = (message: unknown): boolean => {
  if (!isRecord(message) || message.method !== "tools/call" || !isRecord(message.params)) return false
  const name = message.params.name
  if (typeof name !== "string" || !Object.hasOwn(toolRoutes, name)) return false
  const routes = toolRoutes[name as ToolName] as Record<string, EndpointRef>
  const args = isRecord(message.params.arguments) ? message.params.arguments : {}
  const ref = routes.default ?? (typeof args.action === "string" && Object.hasOwn(routes, args.action) ? routes[args.action] : undefined)
  return ref !== undefined && endpointOf(ref).sends
}

/**
 * Whether a request body (one JSON-RPC message or a batch) calls a sending
 * tool: such a request counts against the token's send limit as the route it
 * mirrors does. A body that is not JSON sends nothing (the MCP runtime
 * answers it with a parse error).
 */
export const bodySends = (text: string): boolean => {
  if (text === "") return false
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return false
  }
  return Array.isArray(parsed) ? parsed.some(sendsOne) : sendsOne(parsed)
}
