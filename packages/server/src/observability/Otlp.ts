/**
 * Traces and metrics over OTLP/HTTP, through Effect's own exporters
 * (`effect/observability`), when `OTEL_EXPORTER_OTLP_ENDPOINT` is set
 * (config/OtlpConfig.ts). Provided beneath the whole of `herald serve`
 * (runtime/Server.ts), so every fiber it starts sees the tracer: the HTTP
 * server's span per request (named `METHOD /route/:pattern`, continuing a
 * caller's `traceparent`), the services' `Effect.fn` spans, SQL statements,
 * and entity calls, whose envelopes carry the caller's span ids to the runner
 * that holds the entity: effect/cluster continues the trace there, on
 * whichever node that is. Metrics are the registry `/metrics` shows.
 *
 * Unset: the layer is empty. The native tracer stays, which the HTTP server
 * takes as "no tracing" and skips its span work per request.
 */
import { Clock, Effect, Layer, Option, Redacted, Tracer } from "effect"
import { FetchHttpClient, HttpClient, HttpMiddleware } from "effect/http"
import type { HttpServerRequest } from "effect/http"
import { OtlpMetrics, OtlpSerialization, OtlpTracer } from "effect/observability"
import { randomUUID } from "node:crypto"
import { hostname } from "node:os"
import { otlpConfig } from "../config/OtlpConfig.ts"
import type { OtlpConfigShape } from "../config/OtlpConfig.ts"
import { isCanonicalPath } from "../http/CanonicalPath.ts"
import { routes } from "../http/Routes.ts"
import { redactingSerialization } from "./TraceRedaction.ts"

/** `<endpoint>/v1/<signal>`, joined as the OpenTelemetry SDKs join them. */
export const signalUrl = (endpoint: string, signal: "traces" | "metrics"): string => {
  const url = new URL(endpoint)
  url.pathname += `${url.pathname.endsWith("/") ? "" : "/"}v1/${signal}`
  return url.toString()
}

/**
 * A request's span is named by its method and the pattern of the route it
 * reaches (`POST /hooks/:token`), found in the router's own table: never the
 * raw path, which holds ids (and the inbound webhook's token).
 */
export const requestSpanName = (request: HttpServerRequest.HttpServerRequest): string => {
  const matched = isCanonicalPath(request.url) ? routes.find(request.method, request.url) : undefined
  return matched === undefined ? request.method : `${request.method} ${matched.route.path}`
}

/**
 * The exporters' HTTP client. Effect's exporter retries a failed export a few
 * times, then drops what it held and pauses for a minute, saying so only at
 * Debug: an operator whose collector is unreachable would see nothing. So a
 * failure is logged here at Warning, at most once a minute, naming the host
 * only (the endpoint may hold credentials, the headers do).
 */
const exportClient = (host: string) =>
  Layer.effect(
    HttpClient.HttpClient,
    Effect.map(HttpClient.HttpClient, (client) => {
      let warnedAt = Number.NEGATIVE_INFINITY
      const warn = (what: string) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => {
          if (now - warnedAt < 60_000) return Effect.void
          warnedAt = now
          return Effect.logWarning(
            `OTLP export to ${host} failed (${what}); after its retries the exporter drops that batch and pauses for a minute`
          )
        })
      return client.pipe(
        HttpClient.tap((response) => response.status >= 300 ? warn(`status ${response.status}`) : Effect.void),
        HttpClient.tapError((error) => warn(error.reason._tag))
      )
    })
  ).pipe(Layer.provide(FetchHttpClient.layer))

/**
 * The background workers' passes (runtime/Workers.ts: the outbox and webhook
 * drains, the revocation poll, sweeps) run several times a second on an idle
 * node: exported, they were about ten traces a second of nothing. Their
 * spans are made at level Debug, below the exporter's minimum (Info), so
 * they and everything under them (their SQL, an entity call they make, its
 * handler on another node) are not exported. Requests, and the durable
 * timers they set, are Info.
 */
export const BackgroundTraceLevel = Layer.succeed(Tracer.CurrentTraceLevel, "Debug")

/** The exporters for a configuration: none without an endpoint. */
export const otlpLayer = (config: OtlpConfigShape): Layer.Layer<never> =>
  Option.match(config.endpoint, {
    onNone: () => Layer.empty,
    onSome: (endpoint) => {
      const host = new URL(endpoint).host
      const headers = Redacted.value(config.headers)
      // Which node a span or a series came from: traces across nodes are read by these.
      const resource = {
        serviceName: config.serviceName,
        attributes: { "service.instance.id": randomUUID(), "host.name": hostname(), "process.pid": process.pid }
      }
      const serialization = config.protocol === "http/json" ? OtlpSerialization.layerJson : OtlpSerialization.layerProtobuf
      const exporters = Layer.mergeAll(
        OtlpTracer.layer({ url: signalUrl(endpoint, "traces"), resource, headers, exportInterval: config.traceInterval }),
        OtlpMetrics.layer({ url: signalUrl(endpoint, "metrics"), resource, headers, exportInterval: config.metricInterval })
      ).pipe(Layer.provide(redactingSerialization(serialization)), Layer.provide(exportClient(host)))
      return Layer.mergeAll(
        exporters,
        Layer.succeed(HttpMiddleware.SpanNameGenerator, requestSpanName),
        Layer.succeed(Tracer.MinimumTraceLevel, "Info"),
        Layer.effectDiscard(Effect.logInfo(`exporting traces and metrics over OTLP to ${host} (${config.protocol})`))
      )
    }
  })

/** From the environment: empty unless `OTEL_EXPORTER_OTLP_ENDPOINT` is set. Provided beneath `herald serve`'s whole graph. */
export const OtlpLayer = Layer.unwrap(Effect.map(otlpConfig, otlpLayer))
