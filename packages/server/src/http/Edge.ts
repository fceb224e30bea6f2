/**
 * The edge of every request, applied globally around the router:
 *
 * - a request id on every response (`x-request-id`: the caller's when sane,
 *   otherwise a fresh one), annotated on every log line of the request;
 * - the body limit: a declared `Content-Length` over the limit answers 413
 *   before a byte is read, and an undeclared (chunked) body stops being read
 *   at the limit;
 * - the error-body guarantee: whatever the framework answers on its own (no
 *   route, unsupported media type, an unexpected defect) leaves as the spec's
 *   `{error, code}` JSON, never an empty or text body or a stack trace;
 * - per-route request counts and latency histograms for `/metrics`, and an
 *   access log line (Debug; 5xx at Error with the cause).
 */
import { ByteSize, Cause, Clock, Effect, Metric } from "effect"
import { HttpRouter, HttpServerError, HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpIncomingMessage } from "effect/http"
import { randomUUID } from "node:crypto"
import type { unhandled } from "effect/Types"
import { MAX_BODY_BYTES } from "../config/Limits.ts"

const requestIdPattern = /^[\w.:@/+=-]{1,128}$/

const codeByStatus: Record<number, { code: string; error: string }> = {
  400: { code: "BAD_REQUEST", error: "The request could not be read." },
  401: { code: "UNAUTHORIZED", error: "Unauthorized." },
  403: { code: "FORBIDDEN", error: "Forbidden." },
  404: { code: "NOT_FOUND", error: "No such route." },
  405: { code: "METHOD_NOT_ALLOWED", error: "Method not allowed." },
  413: { code: "PAYLOAD_TOO_LARGE", error: `The body is over the limit of ${MAX_BODY_BYTES} bytes.` },
  415: { code: "UNSUPPORTED_MEDIA_TYPE", error: "Send the body as application/json." },
  500: { code: "INTERNAL_ERROR", error: "Internal error." },
  503: { code: "SERVICE_UNAVAILABLE", error: "Service unavailable." }
}

export const errorResponse = (status: number, override?: { code?: string; error?: string }) => {
  const base = codeByStatus[status] ?? { code: `HTTP_${status}`, error: "Request failed." }
  return HttpServerResponse.jsonUnsafe({ error: override?.error ?? base.error, code: override?.code ?? base.code }, { status })
}

const isJson = (response: HttpServerResponse.HttpServerResponse) => {
  const type = response.body._tag === "Empty" ? undefined : response.body.contentType
  return type !== undefined && (type.startsWith("application/json") || type.startsWith("application/problem+json"))
}

const requests = Metric.counter("herald_http_requests_total", {
  description: "HTTP requests by method, route and status."
})
const latency = Metric.histogram("herald_http_request_duration_seconds", {
  description: "HTTP request latency by method and route.",
  boundaries: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
})

// One tagged metric per (method, route, status): built once, reused.
const seriesCache = new Map<string, { count: Metric.Metric<number, unknown>; latency: Metric.Metric<number, unknown> }>()
const series = (method: string, route: string, status: number) => {
  const key = `${method} ${route} ${status}`
  let s = seriesCache.get(key)
  if (s === undefined) {
    s = {
      count: Metric.withAttributes(requests, { method, route, status: String(status) }),
      latency: Metric.withAttributes(latency, { method, route })
    }
    // Routes are a closed set; the cap guards against a path explosion bug.
    if (seriesCache.size < 10_000) seriesCache.set(key, s)
  }
  return s
}

/** The matched route's pattern, for metrics (never the raw path: ids would explode the series). */
const routeOf = (request: HttpServerRequest.HttpServerRequest, status: number) =>
  Effect.map(Effect.serviceOption(HttpRouter.RouteContext), (ctx) =>
    ctx._tag === "Some" ? ctx.value.route.path : status === 404 ? "unmatched" : request.url.split("?")[0]!.startsWith("/api/") ? "unmatched" : "other")

const bodyTooLarge = (cause: Cause.Cause<unknown>) =>
  cause.reasons.some((r) => {
    const e = Cause.isFailReason(r) ? r.error : Cause.isDieReason(r) ? r.defect : undefined
    return HttpServerError.isHttpServerError(e) && e.reason._tag === "RequestParseError" && e.reason.reason === "BodyTooLarge"
  })

export const EdgeMiddleware = HttpRouter.middleware((httpEffect) =>
  // Every failure is answered here; the cast restores the router's marker type
  // for "errors a later layer may handle", of which none remain.
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const started = yield* Clock.currentTimeNanos
    const incoming = request.headers["x-request-id"]
    const requestId = incoming !== undefined && requestIdPattern.test(incoming) ? incoming : randomUUID()

    const declared = Number(request.headers["content-length"] ?? 0)
    let response: HttpServerResponse.HttpServerResponse
    if (declared > MAX_BODY_BYTES) {
      response = errorResponse(413)
    } else {
      response = yield* httpEffect.pipe(
        Effect.provideService(HttpIncomingMessage.MaxBodySize, ByteSize.bytes(MAX_BODY_BYTES)),
        Effect.annotateLogs("requestId", requestId),
        Effect.catchCause((cause) => {
          if (bodyTooLarge(cause)) return Effect.succeed(errorResponse(413))
          const routeNotFound = cause.reasons.some((r) =>
            Cause.isFailReason(r) && HttpServerError.isHttpServerError(r.error) && r.error.reason._tag === "RouteNotFound")
          if (routeNotFound) return Effect.succeed(errorResponse(404))
          return Effect.logError("request failed", cause).pipe(Effect.as(errorResponse(500)))
        })
      )
      if (response.status >= 400 && !isJson(response)) response = errorResponse(response.status)
    }

    const status = response.status
    const route = yield* routeOf(request, status)
    const seconds = Number((yield* Clock.currentTimeNanos) - started) / 1e9
    const s = series(request.method, route, status)
    yield* Metric.update(s.count, 1)
    yield* Metric.update(s.latency, seconds)
    yield* Effect.logDebug("request").pipe(
      Effect.annotateLogs({ requestId, method: request.method, url: request.url, status, ms: Math.round(seconds * 1e4) / 10 })
    )
    return HttpServerResponse.setHeader(response, "x-request-id", requestId)
  }) as Effect.Effect<HttpServerResponse.HttpServerResponse, unhandled, HttpServerRequest.HttpServerRequest>, { global: true })
