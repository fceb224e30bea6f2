/**
 * The edge of every request. A global router middleware registers, per
 * request, a pre-response handler: the framework calls it with the final
 * response whatever produced it (a handler, a typed error, no route, a
 * defect), so one hook gives:
 *
 * - a request id on every response (`x-request-id`: the caller's when sane,
 *   otherwise a fresh one), annotated on every log line of the request;
 * - one canonical path (CanonicalPath.ts): any other spelling answers 404
 *   before routing. The request's route is then read from the route table
 *   (Routes.ts, matched as the router matches), and every check below is
 *   keyed by that route, never by a prefix of the URL;
 * - a route whose path carries its credential (the inbound webhook's token)
 *   answers 404 for a token without that credential's shape, before its
 *   body is looked at;
 * - the route's body limit: a declared `Content-Length` over the limit
 *   answers 413 before a byte is read, and an undeclared (chunked) body stops
 *   being read at the limit;
 * - the error-body guarantee: whatever the framework answers on its own (no
 *   route, unsupported media type, an unexpected defect) leaves as the spec's
 *   `{error, code}` JSON, never an empty or text body or a stack trace; no
 *   route on a known path answers 405 `METHOD_NOT_ALLOWED` with `Allow`
 *   (Routes.ts);
 * - no body is read before authentication: a route behind a bearer
 *   middleware has its body guarded (BodyGuard.ts: nesting depth, text the
 *   database cannot store) by that middleware once the token checks out; a
 *   route without one (the inbound webhook) here, after its token's shape;
 *   a U+0000 in the URL answers 400 here;
 * - `Retry-After: 1` on a 503 that carries none (momentary unavailability,
 *   cluster/EntityCalls.ts);
 * - `Cache-Control: no-store` and `Pragma: no-cache` on every answer of a
 *   route whose endpoint is `OneTimeSecret` (its answer carries a secret
 *   shown once: a token, a webhook URL, an invite code…), errors included;
 * - per-route request counts and latency histograms for `/metrics`, and an
 *   access log line at Debug whose URL shows no credential (Routes.ts;
 *   unexpected failures are logged at Error by the error reporter in
 *   observability/ErrorLogging.ts).
 */
import { ByteSize, Clock, Context, Effect, LogLevel, Metric, References } from "effect"
import { HttpEffect, HttpIncomingMessage, HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { randomUUID } from "node:crypto"
import { isWellFormed } from "../auth/Secrets.ts"
import { bodyLimitFor, MAX_BODY_BYTES } from "../config/Limits.ts"
import { guardBody, validationFailed } from "./BodyGuard.ts"
import { isCanonicalPath } from "./CanonicalPath.ts"
import { routes } from "./Routes.ts"
import { holdsSecret } from "./SecretRedaction.ts"
import { unstorableMessage, urlHasNul } from "./StorableText.ts"

const requestIdPattern = /^[\w.:@/+=-]{1,128}$/

/**
 * The request id of an answer: the caller's `X-Request-Id` when sane and not shaped like a secret (the id
 * is on every log line of the request), otherwise a fresh one. Also used by answers given before the edge.
 */
export const requestIdOf = (incoming: string | undefined): string =>
  incoming !== undefined && requestIdPattern.test(incoming) && !holdsSecret(incoming) ? incoming : randomUUID()

const codeByStatus: Record<number, { code: string; error: string }> = {
  400: { code: "BAD_REQUEST", error: "The request could not be read." },
  401: { code: "UNAUTHORIZED", error: "Unauthorized." },
  403: { code: "FORBIDDEN", error: "Forbidden." },
  404: { code: "NOT_FOUND", error: "No such route." },
  405: { code: "METHOD_NOT_ALLOWED", error: "Method not allowed." },
  413: { code: "PAYLOAD_TOO_LARGE", error: "The body is over this route's limit." },
  415: { code: "UNSUPPORTED_MEDIA_TYPE", error: "Send the body as application/json (or text/plain where the route takes text)." },
  500: { code: "INTERNAL_ERROR", error: "Internal error." },
  503: { code: "SERVICE_UNAVAILABLE", error: "Service unavailable." }
}

/** The spec's error body for a status the framework answered on its own (`limit`: the route's body limit). */
const errorResponse = (status: number, limit: number) =>
  HttpServerResponse.jsonUnsafe(
    status === 413
      ? { error: `The body is over this route's limit of ${limit} bytes.`, code: "PAYLOAD_TOO_LARGE" }
      : codeByStatus[status] === undefined
      ? { error: "Request failed.", code: `HTTP_${status}` }
      : { error: codeByStatus[status].error, code: codeByStatus[status].code },
    { status }
  )

/** No route matched: 405 with `Allow` when the path is known under other methods, otherwise 404. */
const notFoundOrNotAllowed = (request: HttpServerRequest.HttpServerRequest, limit: number) => {
  const allow = routes.methodsOf(request.url)
  return allow === undefined || allow.includes(request.method)
    ? errorResponse(404, limit)
    : HttpServerResponse.setHeader(errorResponse(405, limit), "allow", allow.join(", "))
}

// A credential in the path without its kind's shape: the body the lookup
// answers for an unknown one (services/Services.ts), so the answer tells
// nothing about which strings are well-formed.
const unknownCredential = HttpServerResponse.jsonUnsafe({ error: "Unknown webhook.", code: "NOT_FOUND" }, { status: 404 })

const isJson = (response: HttpServerResponse.HttpServerResponse) => {
  const type = response.body._tag === "Empty" ? undefined : response.body.contentType
  return type !== undefined && (type.startsWith("application/json") || type.startsWith("application/problem+json"))
}

/** The OAuth browser routes (oauth/) answer their own HTML pages, errors included: they leave as they are. */
const isHtml = (response: HttpServerResponse.HttpServerResponse) =>
  response.body._tag !== "Empty" && response.body.contentType?.startsWith("text/html") === true

/** RFC 9111 §5.2.2.5, and `Pragma` for HTTP/1.0 caches (RFC 6749 §5.1 asks both of the token endpoint). */
const noStore = (_request: HttpServerRequest.HttpServerRequest, response: HttpServerResponse.HttpServerResponse) =>
  Effect.succeed(HttpServerResponse.setHeaders(response, { "cache-control": "no-store", "pragma": "no-cache" }))

const latencyBoundaries = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

// One metric per (method, route, status), built once with its attributes fixed:
// `Metric.withAttributes` on a shared metric re-derives the series key on every
// update, which cost more than the rest of this middleware together.
const seriesCache = new Map<string, { count: Metric.Metric<number, unknown>; latency: Metric.Metric<number, unknown> }>()
const series = (method: string, route: string, status: number) => {
  const key = `${method} ${route} ${status}`
  let s = seriesCache.get(key)
  if (s === undefined) {
    s = {
      count: Metric.counter("herald_http_requests_total", {
        description: "HTTP requests by method, route and status.",
        attributes: { method, route, status: String(status) }
      }),
      latency: Metric.histogram("herald_http_request_duration_seconds", {
        description: "HTTP request latency by method and route.",
        attributes: { method, route },
        boundaries: latencyBoundaries
      })
    }
    // Routes are a closed set; the cap guards against a path explosion bug.
    if (seriesCache.size < 10_000) seriesCache.set(key, s)
  }
  return s
}

/** The matched route's pattern, for metrics (never the raw path: ids would explode the series). */
const routeOf = (context: Context.Context<never>, status: number) => {
  const route = Context.getOrUndefined(context, HttpRouter.RouteContext)
  return route !== undefined ? route.route.path : status === 404 || status === 405 ? "unmatched" : "other"
}

const maxBody = ByteSize.bytes(MAX_BODY_BYTES)

/** Runs on the final response of every request (success or failure), before it is written. */
const finish = (started: bigint, requestId: string, canonical: boolean, limit: number) =>
(request: HttpServerRequest.HttpServerRequest, response: HttpServerResponse.HttpServerResponse) =>
  Effect.withFiber((fiber) => {
    // Framework answers (no route, 413 on a chunked body, a defect) carry no
    // body or a text one: they leave as the spec's `{error, code}`. The
    // edge's own answers are JSON already.
    const matched = Context.getOrUndefined(fiber.context, HttpRouter.RouteContext) !== undefined
    const out = !matched && response.status === 404 && !isJson(response)
      ? notFoundOrNotAllowed(request, limit)
      : response.status >= 400 && !isJson(response) && !(matched && isHtml(response))
      ? errorResponse(response.status, limit)
      : response
    const status = out.status
    const seconds = Number(fiber.getRef(Clock.Clock).currentTimeNanosUnsafe() - started) / 1e9
    const s = series(request.method, routeOf(fiber.context, status), status)
    s.count.updateUnsafe(1, fiber.context)
    s.latency.updateUnsafe(seconds, fiber.context)
    const withId = HttpServerResponse.setHeader(
      // A 503 is momentary (cluster/EntityCalls.ts): say when to try again, unless the answer already does.
      status === 503 && out.headers["retry-after"] === undefined ? HttpServerResponse.setHeader(out, "retry-after", "1") : out,
      "x-request-id",
      requestId
    )
    if (!LogLevel.isGreaterThanOrEqualTo("Debug", fiber.getRef(References.MinimumLogLevel))) return Effect.succeed(withId)
    return Effect.as(
      Effect.logDebug("request").pipe(
        Effect.annotateLogs({ requestId, method: request.method, url: routes.loggable(request.url, canonical), status, ms: Math.round(seconds * 1e4) / 10 })
      ),
      withId
    )
  })

// Every request passes here, so it is one synchronous step: no catch frames
// (failures reach `finish` as responses), metrics updated in place, and the
// access log line built only when Debug is enabled.
export const EdgeMiddleware = HttpRouter.middleware((httpEffect) =>
  Effect.withFiber((fiber) => {
    const request = Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest)
    const requestId = requestIdOf(request.headers["x-request-id"])
    const canonical = isCanonicalPath(request.url)
    // The route the router will reach (the same matcher): every check below is keyed by it.
    const target = canonical ? routes.find(request.method, request.url) : undefined
    const limit = bodyLimitFor(target?.route.path)
    HttpEffect.appendPreResponseHandlerUnsafe(fiber.context, finish(fiber.getRef(Clock.Clock).currentTimeNanosUnsafe(), requestId, canonical, limit))
    // After `finish`, which may replace the response: whatever leaves a secret's route is never cached.
    if (target?.route.noStore === true) HttpEffect.appendPreResponseHandlerUnsafe(fiber.context, noStore)
    // Every log line of the request carries its id. Set on the request's own
    // context (the request frame restores the outer context when it ends), not
    // through a wrapping effect, so the router's RouteContext is still there
    // when `finish` labels the metrics.
    fiber.setContext(Context.add(fiber.context, References.CurrentLogAnnotations, {
      ...fiber.getRef(References.CurrentLogAnnotations),
      requestId
    }))
    if (!canonical) return Effect.succeed(errorResponse(404, limit))
    if (urlHasNul(request.url)) return Effect.succeed(validationFailed("query", unstorableMessage))
    const secret = target?.route.secret
    if (secret !== undefined && !isWellFormed(target!.params[secret.param] ?? "", secret.kind)) return Effect.succeed(unknownCredential)
    const declared = request.headers["content-length"]
    // A declared body over the limit is refused before a byte of it is read;
    // an undeclared (chunked) one is cut off at the limit while it is read.
    if (declared !== undefined && Number(declared) > limit) return Effect.succeed(errorResponse(413, limit))
    // Set on the request's own context, not by a layer: handlers run with
    // their layer's context merged over the request's, so a layer-provided
    // limit would override a route's own.
    fiber.setContext(Context.add(fiber.context, HttpIncomingMessage.MaxBodySize, limit === MAX_BODY_BYTES ? maxBody : ByteSize.bytes(limit)))
    // No route: the router answers 404/405 without reading the body. A bearer
    // route's middleware guards the body once the token checks out (auth/).
    return target === undefined || target.route.secured ? httpEffect : guardBody(request, httpEffect)
  }), { global: true })
