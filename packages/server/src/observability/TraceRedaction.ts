/**
 * No Herald secret leaves in a trace. A server span records the request's
 * URL (`url.full`, `url.path`, `url.query`), and some URLs carry a credential:
 * the inbound webhook's path is its token (`/hooks/hlw_…`), a sign-in link's
 * query its token. Those attributes are rewritten as the access log shows the
 * URL (http/Routes.ts: the credential's segment and secret query values as
 * `…`, and any value shaped like a Herald secret). Any other string shaped
 * like a secret (an error message quoting one, another span's URL) is
 * replaced by `…` whole. Done to each batch as it is encoded, so a request
 * pays nothing for it; the batch is the exporter's own copy, changed in place.
 */
import { Effect, Layer } from "effect"
import { OtlpSerialization } from "effect/observability"
import type { OtlpResource, OtlpTracer } from "effect/observability"
import { isCanonicalPath } from "../http/CanonicalPath.ts"
import { routes } from "../http/Routes.ts"
import { holdsSecret, REDACTED } from "../http/SecretRedaction.ts"

type Span = OtlpTracer.ScopeSpan["spans"][number]

/** OTLP's `SPAN_KIND_SERVER`. */
const SERVER = 2

// Every secret shape has a `_`, written or percent-encoded: text with neither skips the full check.
const redactText = (text: string): string => (text.includes("_") || text.includes("%")) && holdsSecret(text) ? REDACTED : text

const redactValue = (value: OtlpResource.AnyValue): void => {
  if (typeof value.stringValue === "string") value.stringValue = redactText(value.stringValue)
  value.arrayValue?.values.forEach(redactValue)
  value.kvlistValue?.values.forEach((kv) => redactValue(kv.value))
}

/** The request URL attributes of a server span, as the access log would show the URL. */
const redactRequestUrl = (span: Span): void => {
  const full = span.attributes.find((kv) => kv.key === "url.full")?.value.stringValue
  const url = typeof full === "string" ? URL.parse(full) : null
  if (url === null) return
  const target = url.pathname + url.search
  const shown = routes.loggable(target, isCanonicalPath(target))
  const query = shown.indexOf("?")
  for (const kv of span.attributes) {
    if (kv.key === "url.full") kv.value = { stringValue: url.origin + shown }
    else if (kv.key === "url.path") kv.value = { stringValue: query === -1 ? shown : shown.slice(0, query) }
    else if (kv.key === "url.query") kv.value = { stringValue: query === -1 ? "" : shown.slice(query + 1) }
  }
}

/** Redacts one batch of spans in place and answers it. */
export const redactTraces = (data: OtlpTracer.TraceData): OtlpTracer.TraceData => {
  for (const resourceSpans of data.resourceSpans) {
    for (const scopeSpans of resourceSpans.scopeSpans) {
      for (const span of scopeSpans.spans) {
        if (span.kind === SERVER) redactRequestUrl(span)
        for (const kv of span.attributes) redactValue(kv.value)
        for (const event of span.events) for (const kv of event.attributes) redactValue(kv.value)
        if (span.status.message !== undefined) span.status.message = redactText(span.status.message)
      }
    }
  }
  return data
}

/** `base`'s encoding, with every trace batch redacted first (metrics carry route patterns only: unchanged). */
export const redactingSerialization = (base: Layer.Layer<OtlpSerialization.OtlpSerialization>) =>
  Layer.effect(
    OtlpSerialization.OtlpSerialization,
    Effect.map(OtlpSerialization.OtlpSerialization, (inner) => ({
      traces: (data: OtlpTracer.TraceData) => inner.traces(redactTraces(data)),
      metrics: inner.metrics,
      logs: inner.logs
    }))
  ).pipe(Layer.provide(base))
