/**
 * The docs pages (`/api/agent/docs`, `/api/app/docs`: Scalar, served by
 * `HttpApiScalar.layer` with its bundle inlined, so nothing is fetched from a
 * CDN) and the headers that keep them, and every other response, safe:
 *
 * - every response: `X-Content-Type-Options: nosniff`;
 * - a docs page: `Content-Type: text/html; charset=utf-8` and a
 *   Content-Security-Policy allowing exactly what the page runs: its own two
 *   inline scripts by SHA-256 hash (the Scalar bundle and the call that renders
 *   the OpenAPI document), inline styles (Scalar injects its CSS at run time),
 *   images and fonts from this origin or `data:`, requests ("Test request") to
 *   this origin only; no other script, frame, form target, base URL or plugin,
 *   and no framing of the page (`frame-ancestors 'none'`). Scalar's remote
 *   fonts are turned off, so the page loads nothing from elsewhere.
 */
import { Context, Effect, Layer } from "effect"
import { HttpBody, HttpEffect, HttpRouter, HttpServerResponse } from "effect/http"
import type { HttpServerRequest } from "effect/http"
import { HttpApiScalar } from "effect/http-api"
import { AgentApi, AppApi } from "@herald/api"
import { createHash } from "node:crypto"

export const docsPaths = { agent: "/api/agent/docs", app: "/api/app/docs" } as const

const docsPathSet: ReadonlySet<string> = new Set(Object.values(docsPaths))

const inlineScript = /<script>([\s\S]*?)<\/script>/g

/** The policy of one page: its inline scripts, by hash, and nothing else that runs. */
export const contentSecurityPolicy = (html: string) => {
  const hashes = Array.from(html.matchAll(inlineScript), (m) => `'sha256-${createHash("sha256").update(m[1]!).digest("base64")}'`)
  return [
    "default-src 'none'",
    `script-src ${hashes.join(" ")}`,
    "style-src 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'"
  ].join("; ")
}

interface Page {
  readonly body: HttpBody.HttpBody
  readonly csp: string
}

// A docs page is built once (the framework memoizes it), so its charset'd
// body and its policy are computed once per page, keyed by the framework's body.
const pages = new WeakMap<HttpBody.HttpBody, Page>()

const pageOf = (body: HttpBody.HttpBody): Page | undefined => {
  if (body._tag !== "Uint8Array" || !body.contentType.startsWith("text/html")) return undefined
  let page = pages.get(body)
  if (page === undefined) {
    const html = body.text ?? new TextDecoder().decode(body.body)
    page = { body: HttpBody.text(html, "text/html; charset=utf-8"), csp: contentSecurityPolicy(html) }
    pages.set(body, page)
  }
  return page
}

// Keyed by the route the router matched, never by the URL's spelling: every
// spelling the router serves as a docs page (`/api/agent/docs/`, a query)
// gets the page's headers (issue 30), and any other spelling is a 404 at the edge.
const secure = (_request: HttpServerRequest.HttpServerRequest, response: HttpServerResponse.HttpServerResponse) =>
  Effect.withFiber((fiber) => {
    const nosniff = HttpServerResponse.setHeader(response, "x-content-type-options", "nosniff")
    const route = Context.getOrUndefined(fiber.context, HttpRouter.RouteContext)
    const page = route !== undefined && docsPathSet.has(route.route.path) ? pageOf(response.body) : undefined
    if (page === undefined) return Effect.succeed(nosniff)
    return Effect.succeed(HttpServerResponse.setHeader(HttpServerResponse.setBody(nosniff, page.body), "content-security-policy", page.csp))
  })

const appendSecure = Effect.withFiber((fiber) => {
  HttpEffect.appendPreResponseHandlerUnsafe(fiber.context, secure)
  return Effect.void
})

/**
 * Global: the headers above on every response, whatever produced it. Appended
 * once the request has run, so it applies after the edge's own pre-response
 * handler (which may replace a framework answer by a new one).
 */
const SecurityHeaders = HttpRouter.middleware((httpEffect) => Effect.ensuring(httpEffect, appendSecure), { global: true })

/** Both docs pages, with their headers (and `nosniff` on every response). */
export const DocsPages = Layer.mergeAll(
  HttpApiScalar.layer(AgentApi, { path: docsPaths.agent, scalar: { withDefaultFonts: false } }),
  HttpApiScalar.layer(AppApi, { path: docsPaths.app, scalar: { withDefaultFonts: false } }),
  SecurityHeaders
)
