/**
 * An OTLP/HTTP receiver in the test process: what an OpenTelemetry Collector
 * is to a deployed Herald. It takes `POST /v1/traces` and `POST /v1/metrics`
 * in OTLP/JSON (answers 415 to anything else, e.g. protobuf) and keeps every
 * span and metric series it was sent, each with the resource of the process
 * that sent it (`service.name`, `process.pid`, `host.name`,
 * `service.instance.id`), so a test can follow one trace across processes.
 *
 * `env` is what a server needs to export here quickly: give it to
 * `startServer` (test/support/process.ts) or to an in-process server's
 * `OtlpLayer` (observability/Otlp.ts).
 */
import { Context, Effect } from "effect"
import * as http from "node:http"
import { eventually } from "./eventually.ts"

export type Attributes = Readonly<Record<string, unknown>>

export interface ReceivedSpan {
  readonly traceId: string
  readonly spanId: string
  /** Absent on a root span. */
  readonly parentSpanId: string | undefined
  readonly name: string
  readonly kind: "unspecified" | "internal" | "server" | "client" | "producer" | "consumer"
  readonly attributes: Attributes
  /** The sending process's resource attributes (`service.name`, `process.pid`, …). */
  readonly resource: Attributes
  /** OTLP status code: 0 unset, 1 ok, 2 error. */
  readonly status: { readonly code: number; readonly message?: string | undefined }
  readonly events: ReadonlyArray<{ readonly name: string; readonly attributes: Attributes }>
}

export interface ReceivedPoint {
  readonly attributes: Attributes
  /** A sum's or a gauge's value; a histogram's `count`. */
  readonly value: number
}

export interface ReceivedMetric {
  readonly name: string
  readonly type: "sum" | "gauge" | "histogram" | "exponentialHistogram" | "summary"
  readonly points: ReadonlyArray<ReceivedPoint>
  readonly resource: Attributes
}

export interface ReceivedExport {
  readonly path: string
  readonly headers: http.IncomingHttpHeaders
  /** The body as sent: a test can check that a string never left the server. */
  readonly body: string
}

export interface OtlpReceiver {
  /** The receiver's base URL: `OTEL_EXPORTER_OTLP_ENDPOINT`. */
  readonly url: string
  /** Endpoint, JSON encoding, spans exported every 100 ms and metrics every 250 ms. */
  readonly env: Readonly<Record<string, string>>
  /** Every span received so far, in arrival order. */
  readonly spans: () => ReadonlyArray<ReceivedSpan>
  /** Every metric series received so far, one entry per export (the latest last). */
  readonly metrics: () => ReadonlyArray<ReceivedMetric>
  /** Every export request as received. */
  readonly exports: () => ReadonlyArray<ReceivedExport>
  /** The spans of one trace, once `check` holds for them (polled; dies after 10 s). */
  readonly trace: (traceId: string, check: (spans: ReadonlyArray<ReceivedSpan>) => boolean) => Effect.Effect<ReadonlyArray<ReceivedSpan>>
  /** Every span so far, once `check` holds for them (polled; dies after 10 s). */
  readonly waitForSpans: (check: (spans: ReadonlyArray<ReceivedSpan>) => boolean) => Effect.Effect<ReadonlyArray<ReceivedSpan>>
  /** Every metric series so far, once `check` holds for them (polled; dies after 10 s). */
  readonly waitForMetrics: (check: (metrics: ReadonlyArray<ReceivedMetric>) => boolean) => Effect.Effect<ReadonlyArray<ReceivedMetric>>
}

/** The receiver as a service, for tests that build it into a layer. */
export class OtlpReceiverService extends Context.Service<OtlpReceiverService, OtlpReceiver>()("test/OtlpReceiver") {}

interface AnyValue {
  readonly stringValue?: string | null
  readonly boolValue?: boolean | null
  readonly intValue?: string | number | null
  readonly doubleValue?: number | string | null
  readonly arrayValue?: { readonly values: ReadonlyArray<AnyValue> }
  readonly kvlistValue?: { readonly values: ReadonlyArray<KeyValue> }
}
interface KeyValue {
  readonly key: string
  readonly value: AnyValue
}

const valueOf = (v: AnyValue): unknown =>
  v.stringValue ?? v.boolValue ?? (v.intValue !== undefined && v.intValue !== null ? Number(v.intValue) : undefined) ??
    (v.doubleValue !== undefined && v.doubleValue !== null ? Number(v.doubleValue) : undefined) ??
    (v.arrayValue !== undefined ? v.arrayValue.values.map(valueOf) : undefined) ??
    (v.kvlistValue !== undefined ? attributesOf(v.kvlistValue.values) : undefined)

const attributesOf = (list: ReadonlyArray<KeyValue> | undefined): Attributes =>
  Object.fromEntries((list ?? []).map((kv) => [kv.key, valueOf(kv.value)]))

const kinds = ["unspecified", "internal", "server", "client", "producer", "consumer"] as const

interface TracesBody {
  readonly resourceSpans?: ReadonlyArray<{
    readonly resource?: { readonly attributes?: ReadonlyArray<KeyValue> }
    readonly scopeSpans?: ReadonlyArray<{
      readonly spans?: ReadonlyArray<{
        readonly traceId: string
        readonly spanId: string
        readonly parentSpanId?: string
        readonly name: string
        readonly kind: number
        readonly attributes?: ReadonlyArray<KeyValue>
        readonly status?: { readonly code?: number; readonly message?: string }
        readonly events?: ReadonlyArray<{ readonly name: string; readonly attributes?: ReadonlyArray<KeyValue> }>
      }>
    }>
  }>
}

interface Point {
  readonly attributes?: ReadonlyArray<KeyValue>
  readonly asDouble?: number | string | null
  readonly asInt?: number | string
  readonly count?: number | string
}

interface MetricsBody {
  readonly resourceMetrics?: ReadonlyArray<{
    readonly resource?: { readonly attributes?: ReadonlyArray<KeyValue> }
    readonly scopeMetrics?: ReadonlyArray<{
      readonly metrics?: ReadonlyArray<{ readonly name: string } & Partial<Record<ReceivedMetric["type"], { readonly dataPoints?: ReadonlyArray<Point> }>>>
    }>
  }>
}

const spansOf = (body: TracesBody): Array<ReceivedSpan> =>
  (body.resourceSpans ?? []).flatMap((rs) => {
    const resource = attributesOf(rs.resource?.attributes)
    return (rs.scopeSpans ?? []).flatMap((ss) =>
      (ss.spans ?? []).map((s): ReceivedSpan => ({
        traceId: s.traceId,
        spanId: s.spanId,
        parentSpanId: s.parentSpanId === undefined || s.parentSpanId === "" ? undefined : s.parentSpanId,
        name: s.name,
        kind: kinds[s.kind] ?? "unspecified",
        attributes: attributesOf(s.attributes),
        resource,
        status: { code: s.status?.code ?? 0, message: s.status?.message },
        events: (s.events ?? []).map((e) => ({ name: e.name, attributes: attributesOf(e.attributes) }))
      }))
    )
  })

const metricTypes: ReadonlyArray<ReceivedMetric["type"]> = ["sum", "gauge", "histogram", "exponentialHistogram", "summary"]

const metricsOf = (body: MetricsBody): Array<ReceivedMetric> =>
  (body.resourceMetrics ?? []).flatMap((rm) => {
    const resource = attributesOf(rm.resource?.attributes)
    return (rm.scopeMetrics ?? []).flatMap((sm) =>
      (sm.metrics ?? []).flatMap((m): Array<ReceivedMetric> => {
        const type = metricTypes.find((t) => m[t] !== undefined)
        if (type === undefined) return []
        const points = (m[type]?.dataPoints ?? []).map((p) => ({
          attributes: attributesOf(p.attributes),
          value: Number(p.asDouble ?? p.asInt ?? p.count ?? Number.NaN)
        }))
        return [{ name: m.name, type, points, resource }]
      })
    )
  })

/** Starts a receiver on a free loopback port; it stops with the scope. */
export const otlpReceiver = Effect.acquireRelease(
  Effect.callback<{ readonly server: http.Server; readonly receiver: OtlpReceiver }>((resume) => {
    const spans: Array<ReceivedSpan> = []
    const metrics: Array<ReceivedMetric> = []
    const exports: Array<ReceivedExport> = []
    const server = http.createServer((req, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (c: Buffer) => chunks.push(c))
      req.on("end", () => {
        const path = req.url ?? "/"
        const body = Buffer.concat(chunks).toString("utf8")
        const known = req.method === "POST" && (path === "/v1/traces" || path === "/v1/metrics")
        if (!known || req.headers["content-type"]?.startsWith("application/json") !== true) {
          res.writeHead(known ? 415 : 404).end()
          return
        }
        exports.push({ path, headers: req.headers, body })
        if (path === "/v1/traces") spans.push(...spansOf(JSON.parse(body) as TracesBody))
        else metrics.push(...metricsOf(JSON.parse(body) as MetricsBody))
        // An empty ExportServiceResponse: everything accepted.
        res.writeHead(200, { "content-type": "application/json" }).end("{}")
      })
    })
    server.listen(0, "127.0.0.1", () => {
      const url = `http://127.0.0.1:${(server.address() as { port: number }).port}`
      const waitForSpans = (check: (spans: ReadonlyArray<ReceivedSpan>) => boolean) => eventually(Effect.sync(() => [...spans]), check)
      resume(Effect.succeed({
        server,
        receiver: {
          url,
          env: {
            OTEL_EXPORTER_OTLP_ENDPOINT: url,
            OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
            OTEL_BSP_SCHEDULE_DELAY: "100",
            OTEL_METRIC_EXPORT_INTERVAL: "250"
          },
          spans: () => [...spans],
          metrics: () => [...metrics],
          exports: () => [...exports],
          waitForSpans,
          trace: (traceId, check) =>
            Effect.map(waitForSpans((all) => check(all.filter((s) => s.traceId === traceId))), (all) => all.filter((s) => s.traceId === traceId)),
          waitForMetrics: (check) => eventually(Effect.sync(() => [...metrics]), check)
        }
      }))
    })
  }),
  ({ server }) =>
    Effect.callback<void>((resume) => {
      server.closeAllConnections()
      server.close(() => resume(Effect.void))
    })
).pipe(Effect.map(({ receiver }) => receiver))

/** The span of `spans` named `name`, or a failed assertion naming what there is. */
export const spanNamed = (spans: ReadonlyArray<ReceivedSpan>, name: string): ReceivedSpan => {
  const found = spans.find((s) => s.name === name)
  if (found === undefined) throw new Error(`no span ${JSON.stringify(name)} among ${JSON.stringify(spans.map((s) => s.name))}`)
  return found
}

/** True when `ancestor` is `span`'s parent, or its parent's, and so on, within `spans`. */
export const descendsFrom = (spans: ReadonlyArray<ReceivedSpan>, span: ReceivedSpan, ancestor: ReceivedSpan): boolean => {
  const byId = new Map(spans.map((s) => [s.spanId, s]))
  let current: ReceivedSpan | undefined = span
  for (let hops = 0; current !== undefined && hops < 1000; hops++) {
    if (current.parentSpanId === ancestor.spanId) return true
    current = current.parentSpanId === undefined ? undefined : byId.get(current.parentSpanId)
  }
  return false
}
