/**
 * Where traces and metrics go over OTLP/HTTP (observability/Otlp.ts), under
 * the OpenTelemetry SDK's own variable names so a collector's usual settings
 * apply unchanged. Unset endpoint: nothing is exported and no exporter is
 * built. Values are checked at start, and a wrong one stops the server with a
 * message that names the variable (never the headers' values: they carry API
 * keys).
 */
import { Config, Duration, Effect, Option, Redacted } from "effect"
import * as Env from "./Variable.ts"

export type OtlpProtocol = "http/protobuf" | "http/json"

export interface OtlpConfigShape {
  /** Some: the receiver's base URL; signals go to `<endpoint>/v1/traces` and `<endpoint>/v1/metrics`. */
  readonly endpoint: Option.Option<string>
  /** Sent with every export (an API key, a tenant). */
  readonly headers: Redacted.Redacted<Readonly<Record<string, string>>>
  readonly serviceName: string
  readonly protocol: OtlpProtocol
  /** How long finished spans wait to be exported in one batch. */
  readonly traceInterval: Duration.Duration
  /** How often every metric's current value is exported. */
  readonly metricInterval: Duration.Duration
}

const ENDPOINT = "OTEL_EXPORTER_OTLP_ENDPOINT"
const HEADERS = "OTEL_EXPORTER_OTLP_HEADERS"

/** An http(s) URL; blank counts as unset (a common shell idiom). */
const endpoint: Env.Variable<Option.Option<string>> = {
  name: ENDPOINT,
  type: "URL (`http://` or `https://`)",
  default: "(unset)",
  description: "Base URL of an OTLP/HTTP receiver (an OpenTelemetry Collector, a tracing vendor's endpoint, e.g. " +
    "`http://collector:4318`): traces are sent to `<endpoint>/v1/traces` and metrics to `<endpoint>/v1/metrics`. " +
    "Unset: nothing is exported and tracing costs nothing.",
  config: Config.option(Config.String(ENDPOINT)).pipe(
    Config.map(Option.map((value) => value.trim())),
    Config.map(Option.filter((value) => value !== "")),
    Config.mapEffect(Option.match({
      onNone: () => Effect.succeed(Option.none<string>()),
      onSome: (value) => {
        const url = URL.parse(value)
        return url !== null && (url.protocol === "http:" || url.protocol === "https:")
          ? Effect.succeed(Option.some(value))
          : Effect.fail(Env.configError(`${ENDPOINT} must be an http:// or https:// URL, not ${JSON.stringify(value)}`))
      }
    }))
  )
}

/**
 * `key=value` pairs separated by commas, values percent-encoded: the format
 * the OpenTelemetry SDKs read. The message of a bad entry names its position,
 * never its text (it may hold a key).
 */
const parseHeaders = (text: string): Effect.Effect<Record<string, string>, Config.ConfigError> => {
  const headers: Record<string, string> = {}
  const entries = text.split(",").map((entry) => entry.trim()).filter((entry) => entry !== "")
  for (const [i, entry] of entries.entries()) {
    const eq = entry.indexOf("=")
    const key = eq === -1 ? "" : entry.slice(0, eq).trim().toLowerCase()
    let value: string | undefined
    try {
      value = eq === -1 ? undefined : decodeURIComponent(entry.slice(eq + 1).trim())
    } catch {
      value = undefined
    }
    if (!/^[!#$%&'*+.^_`|~0-9a-z-]+$/u.test(key) || value === undefined) {
      return Effect.fail(Env.configError(`${HEADERS} must be comma-separated key=value pairs with percent-encoded values; entry ${i + 1} is not`))
    }
    headers[key] = value
  }
  return Effect.succeed(headers)
}

const headers: Env.Variable<Redacted.Redacted<Readonly<Record<string, string>>>> = {
  name: HEADERS,
  type: "secret string",
  default: "(unset)",
  description: "Headers sent with every export, as `key=value` pairs separated by commas with percent-encoded values " +
    "(`api-key=abc123,x-tenant=ops`): where a vendor wants its API key. Never printed.",
  config: Config.option(Config.Redacted(HEADERS)).pipe(
    Config.mapEffect(Option.match({
      onNone: () => Effect.succeed(Redacted.make<Readonly<Record<string, string>>>({})),
      onSome: (text) => Effect.map(parseHeaders(Redacted.value(text)), (parsed) => Redacted.make<Readonly<Record<string, string>>>(parsed))
    }))
  )
}

/** A positive number of milliseconds, as the OpenTelemetry variables count their intervals. */
const millis = (name: string, options: { readonly default: number; readonly description: string }): Env.Variable<Duration.Duration> => ({
  name,
  type: "integer (milliseconds, at least 1)",
  default: `\`${options.default}\``,
  description: options.description,
  config: Config.String(name).pipe(
    Config.mapEffect((value) => Env.parseNumber(name, value, { integer: true })),
    Config.withDefault(options.default),
    Config.mapEffect((ms) =>
      ms >= 1 ? Effect.succeed(Duration.millis(ms)) : Effect.fail(Env.configError(`${name} must be at least 1 (milliseconds), not ${ms}`))
    )
  )
})

export const otlpVariables = {
  endpoint,
  headers,
  serviceName: Env.string("OTEL_SERVICE_NAME", {
    default: "herald",
    description: "`service.name` of the exported traces and metrics (each node also reports its `host.name` and " +
      "`process.pid`, and a `service.instance.id` of its own)."
  }),
  protocol: Env.literals("OTEL_EXPORTER_OTLP_PROTOCOL", ["http/protobuf", "http/json"], {
    default: "http/protobuf",
    description: "How exports are encoded: protobuf (what collectors expect by default) or JSON. gRPC is not offered: " +
      "point Herald at the receiver's HTTP port (4318 on a Collector)."
  }),
  traceInterval: millis("OTEL_BSP_SCHEDULE_DELAY", {
    default: 5000,
    description: "Milliseconds between exports of finished spans (sooner when 1000 are waiting). Spans still waiting " +
      "at shutdown are exported before the process exits."
  }),
  metricInterval: millis("OTEL_METRIC_EXPORT_INTERVAL", {
    default: 60_000,
    description: "Milliseconds between exports of every metric's current value (cumulative, as `/metrics` shows them)."
  })
}

export const otlpConfig: Config.Config<OtlpConfigShape> = Env.configOf(otlpVariables)
