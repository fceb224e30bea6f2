/**
 * The person's console, served by `herald serve` on the same origin as the
 * Person API (ARCHITECTURE.md "The person's side"): one shell page for every
 * console path — the browser's router (packages/console/public/app) draws
 * the page from the Person API —, the console's static files, the service
 * worker at `/sw.js` and the web app manifest.
 *
 * Only the paths listed here are console paths: anything else, and every
 * unknown path under `/api/`, `/oauth/`, `/hooks/` and `/.well-known/`, is
 * still the JSON 404 of the edge (http/Edge.ts). The shell runs under a
 * strict Content-Security-Policy: scripts, styles and requests from this
 * origin only, nothing inline, never framed.
 */
import { Effect } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { AppConfig } from "../config/AppConfig.ts"
import type { ConsoleFile } from "./ConsoleFiles.ts"
import { loadConsoleFiles } from "./ConsoleFiles.ts"

/** The console's pages (contract of issue 32): each answers the shell. */
export const consolePages = [
  "/",
  "/sign-in",
  "/inbox",
  "/inbox/:id",
  "/prompts/:id",
  "/activities",
  "/devices",
  "/tokens",
  "/quiet-hours",
  "/teams",
  "/teams/:id",
  "/join/:code",
  "/oncall",
  "/apps",
  "/mini-apps/:packageId/install",
  "/settings",
  "/email"
] as const

/** The shell's policy: nothing inline, nothing from another origin, no framing, forms and `<base>` pinned. */
export const consoleContentSecurityPolicy = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'"
].join("; ")

const shellHeaders = {
  "content-security-policy": consoleContentSecurityPolicy,
  "cache-control": "no-cache",
  "x-frame-options": "DENY",
  "referrer-policy": "same-origin"
}

const year = 365 * 24 * 60 * 60

/** A file as a response: gzipped when the browser takes it, 304 when its copy is current. */
const serve = (request: HttpServerRequest.HttpServerRequest, file: ConsoleFile, headers: Readonly<Record<string, string>>) => {
  const common = {
    ...headers,
    "etag": file.etag,
    "vary": "accept-encoding",
    "cache-control": file.immutable ? `public, max-age=${year}, immutable` : headers["cache-control"] ?? "no-cache"
  }
  const cached = request.headers["if-none-match"]
  if (cached !== undefined && cached.split(/\s*,\s*/).includes(file.etag)) {
    return HttpServerResponse.empty({ status: 304, headers: common })
  }
  const gzip = file.gzip !== undefined && /\bgzip\b/.test(request.headers["accept-encoding"] ?? "")
  return HttpServerResponse.uint8Array(gzip ? file.gzip! : file.body, {
    contentType: file.contentType,
    headers: gzip ? { ...common, "content-encoding": "gzip" } : common
  })
}

/**
 * Where a page asked for at a loopback address should be opened instead: the
 * public URL, when it names `localhost` on the same port. Sessions, the CSRF
 * rule and passkeys are bound to the public origin, and the quick start's
 * server listens on 127.0.0.1 while its public URL says localhost — a console
 * opened at `http://127.0.0.1:8080` could sign in but change nothing.
 */
export const loopbackRedirect = (publicUrl: string, host: string | undefined, path: string): string | undefined => {
  const target = new URL(publicUrl)
  if (host === undefined || target.hostname !== "localhost") return undefined
  const at = /^(127(?:\.\d{1,3}){3}|\[::1\])(?::(\d+))?$/.exec(host)
  if (at === null) return undefined
  const port = at[2] ?? (target.protocol === "https:" ? "443" : "80")
  const targetPort = target.port === "" ? (target.protocol === "https:" ? "443" : "80") : target.port
  return port === targetPort ? `${target.origin}${path}` : undefined
}

const notFound = HttpServerResponse.jsonUnsafe({ error: "No such file.", code: "NOT_FOUND" }, { status: 404 })

/** The console's routes; its files are read once, when the layer is built. */
export const ConsoleRoutes = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const { files, shell } = yield* Effect.sync(loadConsoleFiles)
    const { publicUrl } = yield* AppConfig
    const page = (request: HttpServerRequest.HttpServerRequest) => {
      const moved = loopbackRedirect(publicUrl, request.headers["host"], request.url)
      return Effect.succeed(moved !== undefined ? HttpServerResponse.redirect(moved, { status: 302 }) : serve(request, shell, shellHeaders))
    }
    for (const path of consolePages) yield* router.add("GET", path, page)
    // The worker's own policy comes with its script; `Service-Worker-Allowed` states the scope it may take.
    const worker = files.get("/sw.js")!
    yield* router.add("GET", "/sw.js", (request) =>
      Effect.succeed(serve(request, worker, { "content-security-policy": consoleContentSecurityPolicy, "service-worker-allowed": "/" })))
    const manifest = files.get("/manifest.webmanifest")!
    yield* router.add("GET", "/manifest.webmanifest", (request) => Effect.succeed(serve(request, manifest, {})))
    yield* router.add("GET", "/console/*", (request) => {
      const query = request.url.indexOf("?")
      const file = files.get(query === -1 ? request.url : request.url.slice(0, query))
      return Effect.succeed(file === undefined ? notFound : serve(request, file, {}))
    })
  })
)
