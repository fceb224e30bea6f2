/**
 * Every route Herald serves, in one table matched exactly as the router
 * matches (the same FindMyWay router with the same `routerConfig`), derived
 * at start from the three HttpApi definitions plus the operator and docs
 * routes beside them. The edge reads a request's route from it before the
 * router runs, so the body limit, the inbound token's shape check, the body
 * guard, log redaction and `no-store` on answers that carry a secret follow
 * the route the request will reach — never a
 * prefix of its URL — and 405's `Allow` lists the methods of the path's
 * routes.
 */
import { AgentApi, AppApi, HooksApi, OAuthApi, OneTimeSecret, SignInToken, WebhookToken } from "@herald/api"
import { FindMyWay } from "effect/http"
import { HttpApi, HttpApiMiddleware } from "effect/http-api"
import type { HttpApiGroup } from "effect/http-api"
import { Context, SchemaAST } from "effect"
import type { Schema } from "effect"
import type { SecretKind } from "../auth/Secrets.ts"
import { MCP_PATH } from "../oauth/McpScopes.ts"
import { redactSecrets } from "./SecretRedaction.ts"

/**
 * How the router matches (runtime/Server.ts): case-sensitive, `//` not
 * collapsed (such a path is refused at the edge before: CanonicalPath.ts), a
 * trailing slash the same path as without.
 */
export const routerConfig: FindMyWay.RouterConfig = {
  caseSensitive: true,
  ignoreDuplicateSlashes: false,
  ignoreTrailingSlash: true,
  maxParamLength: 100
}

/** Path parameters that are credentials, by their schema in the contract: never logged, their shape checked at the edge. */
const secretParamSchemas: ReadonlyArray<readonly [Schema.Top, SecretKind]> = [[WebhookToken, "hlw"]]

/** Query parameters that are credentials (a sign-in link's token), by their schema's identifier: never logged. */
const secretQueryIdentifiers: ReadonlySet<unknown> = new Set([SignInToken].map((schema) => schema.ast.annotations?.identifier))

export interface Route {
  readonly method: string
  /** The pattern, as the router's `RouteContext` names it (`/hooks/:token`). */
  readonly path: string
  /** A security middleware authenticates the request before its handler, and guards the body after (auth/). */
  readonly secured: boolean
  /** The parameter that is the request's credential and its kind (the inbound webhook's token), if any. */
  readonly secret?: { readonly param: string; readonly kind: SecretKind } | undefined
  /** Query parameters that are credentials (`GET /oauth/sign-in`'s `token`): a log line shows `…` for their values. */
  readonly secretQuery?: ReadonlyArray<string> | undefined
  /** The endpoint is `OneTimeSecret` (its answer carries a secret shown once): every answer is `Cache-Control: no-store`. */
  readonly noStore?: boolean | undefined
}

/** Routes served beside the HttpApis (http/Ops.ts, the OpenAPI documents and docs UIs of runtime/Server.ts). */
export const opsRoutes: ReadonlyArray<readonly [method: string, path: string]> = [
  ["GET", "/healthz"],
  ["GET", "/readyz"],
  ["GET", "/metrics"],
  ["GET", "/api/agent/openapi.json"],
  ["GET", "/api/app/openapi.json"],
  ["GET", "/hooks/openapi.json"],
  ["GET", "/oauth/openapi.json"],
  ["GET", "/api/agent/docs"],
  ["GET", "/api/app/docs"]
]

/**
 * The MCP endpoint (mcp/McpRoutes.ts): served beside the HttpApis, behind its
 * own bearer gate (mcp/McpAuth.ts), which reads and guards the body once the
 * token checks out.
 */
export const mcpRoutes: ReadonlyArray<readonly [method: string, path: string]> = [
  ["POST", MCP_PATH],
  ["DELETE", MCP_PATH]
]

/** Every endpoint of an HttpApi, its prefix included. */
export const routesOf = <Id extends string, Groups extends HttpApiGroup.Constraint>(api: HttpApi.HttpApi<Id, Groups>) => {
  const routes: Array<Route> = []
  HttpApi.reflect(api, {
    onGroup() {},
    onEndpoint({ endpoint, mergedAnnotations, middleware }) {
      // The endpoint's params struct keeps each field's schema AST as declared.
      const ast = endpoint.params?.ast
      const fields = ast !== undefined && SchemaAST.isObjects(ast) ? ast.propertySignatures : []
      const secret = fields.flatMap((field) =>
        secretParamSchemas.filter(([schema]) => schema.ast === field.type).map(([, kind]) => ({ param: String(field.name), kind }))
      )[0]
      const query = endpoint.query?.ast
      const secretQuery = (query !== undefined && SchemaAST.isObjects(query) ? query.propertySignatures : [])
        .filter((field) => secretQueryIdentifiers.has(field.type.annotations?.identifier)).map((field) => String(field.name))
      routes.push({
        method: endpoint.method,
        path: endpoint.path,
        secured: [...middleware].some(HttpApiMiddleware.isSecurity),
        secret,
        ...(secretQuery.length > 0 ? { secretQuery } : {}),
        ...(Context.getOrUndefined(mergedAnnotations, OneTimeSecret) === true ? { noStore: true } : {})
      })
    }
  })
  return routes
}

export interface Matched {
  readonly route: Route
  readonly params: Readonly<Record<string, string | undefined>>
}

const redacted = "…"

/** A query string with the values of the named parameters shown as `…` (names compared decoded, as the handler reads them). */
const redactQuery = (search: string, secret: ReadonlyArray<string> | undefined): string => {
  if (secret === undefined) return search
  const params = [...new URLSearchParams(search)]
  if (!params.some(([name]) => secret.includes(name))) return search
  const shown = params.map(([name, value]) => `${encodeURIComponent(name)}=${secret.includes(name) ? redacted : encodeURIComponent(value)}`)
  return `?${shown.join("&")}`
}

/** Builds the table of a set of routes. */
export const makeRoutes = (routes: ReadonlyArray<Route>) => {
  // The router refuses a parameter over `maxParamLength` (a 404); the table
  // still names its route, so a long inbound token is refused as one.
  const router = FindMyWay.make<Route>({ ...routerConfig, maxParamLength: Number.MAX_SAFE_INTEGER })
  const methods = new Set<string>()
  for (const route of routes) {
    router.on(route.method, route.path as FindMyWay.PathInput, route)
    methods.add(route.method)
  }
  // Words a route has literally: all an unmatched path may show in a log line.
  const literals = new Set(routes.flatMap((r) => r.path.split("/").filter((s) => s !== "" && !s.startsWith(":"))))

  const find = (method: string, url: string): Matched | undefined => {
    const found = router.find(method, url) ?? (method === "HEAD" ? router.find("GET", url) : undefined)
    return found === undefined ? undefined : { route: found.handler, params: found.params }
  }

  /** Every method the path's routes take (HEAD with GET), or undefined for a path no route has. */
  const methodsOf = (url: string): ReadonlyArray<string> | undefined => {
    const allow = new Set<string>()
    for (const method of methods) {
      if (router.find(method, url) !== undefined) {
        allow.add(method)
        if (method === "GET") allow.add("HEAD")
      }
    }
    return allow.size === 0 ? undefined : [...allow].sort()
  }

  /**
   * The URL as a log line may show it. A path with a route (under any method)
   * shows its segments but the credential's; any other shows only the words
   * routes have literally, and no query: it may be anything a client sent.
   */
  const loggable = (url: string, canonical: boolean): string => {
    let matched: Matched | undefined
    if (canonical) {
      for (const method of methods) {
        matched = find(method, url)
        if (matched !== undefined) break
      }
    }
    const query = url.indexOf("?")
    const segments = (query === -1 ? url : url.slice(0, query)).split("/")
    if (matched !== undefined) {
      const search = query === -1 ? "" : redactQuery(url.slice(query), matched.route.secretQuery)
      // And any value shaped like a Herald secret, wherever it is (SecretRedaction.ts).
      if (matched.route.secret === undefined) return redactSecrets((query === -1 ? url : url.slice(0, query)) + search)
      const at = matched.route.path.split("/").indexOf(`:${matched.route.secret.param}`)
      return redactSecrets(segments.map((s, i) => i === at ? redacted : s).join("/") + search)
    }
    return segments.map((s) => s === "" || literals.has(s) ? s : redacted).join("/") + (query === -1 ? "" : "?" + redacted)
  }

  return { find, methodsOf, loggable }
}

/** Every route Herald serves. */
export const servedRoutes: ReadonlyArray<Route> = [
  ...routesOf(AgentApi),
  ...routesOf(AppApi),
  ...routesOf(HooksApi),
  ...routesOf(OAuthApi),
  ...opsRoutes.map(([method, path]) => ({ method, path, secured: false })),
  ...mcpRoutes.map(([method, path]) => ({ method, path, secured: true }))
]

export const routes = makeRoutes(servedRoutes)
