/**
 * The methods each known path answers, for 405 `METHOD_NOT_ALLOWED` and its
 * `Allow` header: derived once, at start, from the three HttpApi definitions
 * plus the operator and docs routes that live outside them.
 */
import { AgentApi, AppApi, HooksApi } from "@herald/api"
import { HttpApi } from "effect/http-api"
import type { HttpApiGroup } from "effect/http-api"

/** Routes served beside the HttpApis (http/Ops.ts, the OpenAPI documents and docs UIs of runtime/Server.ts). */
export const opsRoutes: ReadonlyArray<readonly [method: string, path: string]> = [
  ["GET", "/healthz"],
  ["GET", "/readyz"],
  ["GET", "/metrics"],
  ["GET", "/api/agent/openapi.json"],
  ["GET", "/api/app/openapi.json"],
  ["GET", "/hooks/openapi.json"],
  ["GET", "/api/agent/docs"],
  ["GET", "/api/app/docs"]
]

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

// The router matches case-insensitively, ignores duplicate and trailing
// slashes, and a `:param` is one non-empty segment: the same here.
const normalize = (path: string) => {
  const collapsed = path.toLowerCase().replace(/\/{2,}/g, "/")
  return collapsed.length > 1 && collapsed.endsWith("/") ? collapsed.slice(0, -1) : collapsed
}

const patternOf = (path: string) =>
  normalize(path).split("/").map((segment) => segment.startsWith(":") ? "[^/]+" : escape(segment)).join("/")

/** Builds the lookup: a request path to the methods its route takes, or undefined for an unknown path. */
export const makeAllowedMethods = (routes: ReadonlyArray<readonly [method: string, path: string]>) => {
  const byPattern = new Map<string, Set<string>>()
  for (const [method, path] of routes) {
    const key = patternOf(path)
    const methods = byPattern.get(key) ?? new Set<string>()
    methods.add(method)
    // The router answers HEAD with the GET route.
    if (method === "GET") methods.add("HEAD")
    byPattern.set(key, methods)
  }
  const table = [...byPattern].map(([pattern, methods]) => ({ regex: new RegExp(`^${pattern}$`), methods }))
  return (url: string): ReadonlyArray<string> | undefined => {
    const query = url.indexOf("?")
    const path = normalize(query === -1 ? url : url.slice(0, query))
    // The router keeps one tree per method, so a path takes every method of
    // every pattern it matches (`…/read-all` is POST's literal and GET's `:id`).
    const allow = new Set<string>()
    for (const entry of table) if (entry.regex.test(path)) for (const m of entry.methods) allow.add(m)
    return allow.size === 0 ? undefined : [...allow].sort()
  }
}

/** The `[method, path]` of every endpoint of an HttpApi, its prefix included. */
export const routesOf = <Id extends string, Groups extends HttpApiGroup.Constraint>(api: HttpApi.HttpApi<Id, Groups>) => {
  const routes: Array<readonly [string, string]> = []
  HttpApi.reflect(api, {
    onGroup() {},
    onEndpoint({ endpoint }) {
      routes.push([endpoint.method, endpoint.path])
    }
  })
  return routes
}

/** Every route Herald serves: the lookup the edge uses to tell 405 from 404. */
export const allowedMethods = makeAllowedMethods([...routesOf(AgentApi), ...routesOf(AppApi), ...routesOf(HooksApi), ...opsRoutes])
