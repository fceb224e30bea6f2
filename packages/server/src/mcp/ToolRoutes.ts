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

/**
 * Whether a call of the tool `name` with `args` counts as a send: the
 * mirrored endpoint's `SendingOperation` (`progress` by its `action`). A name
 * that is no tool sends nothing (the runtime answers it as unknown).
 */
export const callSends = (name: string, args: unknown): boolean => {
  if (!Object.hasOwn(toolRoutes, name)) return false
  const routes = toolRoutes[name as ToolName] as Record<string, EndpointRef>
  const action = isRecord(args) ? args.action : undefined
  const ref = routes.default ?? (typeof action === "string" && Object.hasOwn(routes, action) ? routes[action] : undefined)
  return ref !== undefined && endpointOf(ref).sends
}

/** Whether one JSON-RPC message is a `tools/call` of a sending operation. */
const sendsOne = (message: unknown): boolean =>
  isRecord(message) && message.method === "tools/call" && isRecord(message.params) &&
  typeof message.params.name === "string" && callSends(message.params.name, message.params.arguments)

/** What a request body costs: its JSON-RPC messages (a batch's length), and its calls of sending tools. */
export interface BodyUnits {
  /** Whether the body is a JSON-RPC batch (an array). */
  readonly batch: boolean
  /** Messages: each counts as a request (a body that is no JSON-RPC at all counts as one). */
  readonly messages: number
  readonly sends: number
}

/**
 * The units of a request body (one JSON-RPC message or a batch): each message
 * counts against the token's request limit, and each call of a sending tool
 * against its send limit, as the routes they mirror do. A body that is not
 * JSON is one message that sends nothing (the MCP runtime answers it with a
 * parse error).
 */
export const bodyUnits = (text: string): BodyUnits => {
  let parsed: unknown
  try {
    parsed = text === "" ? undefined : JSON.parse(text)
  } catch {
    parsed = undefined
  }
  if (!Array.isArray(parsed)) return { batch: false, messages: 1, sends: sendsOne(parsed) ? 1 : 0 }
  return { batch: true, messages: Math.max(1, parsed.length), sends: parsed.filter(sendsOne).length }
}
