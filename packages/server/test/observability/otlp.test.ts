/**
 * Traces and metrics over OTLP (issue 33): a server built with
 * `OTEL_EXPORTER_OTLP_ENDPOINT` pointing at a receiver run here (OTLP/JSON)
 * exports each request as one trace — the route's server span, continuing
 * the caller's `traceparent`, the services' spans under it, and an entity
 * call carried into the entity's handler by the envelope's span ids — and
 * every metric `/metrics` shows. No secret in a URL leaves in a trace.
 * Unset, nothing is built. `herald serve` itself exports from its process.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { HeraldClient, HeraldPersonClient } from "@herald/client"
import { ConfigProvider, Duration, Effect, Exit, Layer, Option, Tracer } from "effect"
import { otlpConfig } from "../../src/config/OtlpConfig.ts"
import { generateSecret } from "../../src/auth/Secrets.ts"
import { OtlpLayer, signalUrl } from "../../src/observability/Otlp.ts"
import { childDatabase } from "../../../../test/support/database.ts"
import { sentNotification } from "../../../../test/support/notifications.ts"
import { descendsFrom, otlpReceiver, OtlpReceiverService, spanNamed } from "../../../../test/support/otlpReceiver.ts"
import type { Attributes, ReceivedMetric, ReceivedSpan } from "../../../../test/support/otlpReceiver.ts"
import { cliJson, startServer } from "../../../../test/support/process.ts"
import { moveDeadline } from "../../../../test/support/prompts.ts"
import { makeAgent, rawFetch, registerDevice, testServerLayer } from "../../../../test/support/server.ts"

/** Sent with every export; the value is percent-encoded as the variable's format asks. */
const exportHeaders = { OTEL_EXPORTER_OTLP_HEADERS: "x-otlp-key=s3cr%3Dt, x-tenant=herald-tests" }

const withEnv = (env: Record<string, string>) => ConfigProvider.layer(ConfigProvider.fromUnknown(env))

/** The service in-process, exporting to the receiver (built first, stopped last: the shutdown flush reaches it). */
const ServerLayer = Layer.unwrap(Effect.map(OtlpReceiverService, (receiver) =>
  testServerLayer().pipe(Layer.provide(OtlpLayer.pipe(Layer.provide(withEnv({ ...receiver.env, ...exportHeaders }))))))).pipe(
    Layer.provideMerge(Layer.effect(OtlpReceiverService, otlpReceiver))
  )

/** Runs `self` in a span of the test's own, whose trace the typed client carries to the server (`traceparent`). */
const traced = <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.flatMap(Effect.orDie(Effect.currentSpan), (span) => Effect.map(self, (a) => [span.traceId.padStart(32, "0"), a] as const)).pipe(
    Effect.withSpan("test request")
  )

const named = (spans: ReadonlyArray<ReceivedSpan>, names: ReadonlyArray<string>) => names.every((n) => spans.some((s) => s.name === n))

layer(ServerLayer, { timeout: "120 seconds", excludeTestServices: true })("OTLP export from a running server", (it) => {
  it.effect("a notification is one trace: the route's span, continuing the caller's, and the service's spans under it", () =>
    Effect.gen(function*() {
      const receiver = yield* OtlpReceiverService
      const agent = yield* makeAgent(["notifications:send"])
      yield* registerDevice(agent, "iphone-")
      const [traceId, sent] = yield* traced(sentNotification(agent.client.notifications.create({
        payload: { title: "Build green", body: "main #412" }
      })))
      assert.strictEqual(sent.accepted, 1)

      const spans = yield* receiver.trace(traceId, (s) => named(s, ["POST /api/agent/notifications", "Notifications.send"]))
      const route = spanNamed(spans, "POST /api/agent/notifications")
      assert.strictEqual(route.kind, "server")
      assert.strictEqual(route.attributes["http.route"], "/api/agent/notifications")
      assert.strictEqual(route.attributes["http.response.status_code"], 201)
      assert.isDefined(route.parentSpanId, "the caller's span is the route span's parent")
      assert.strictEqual(route.resource["service.name"], "herald")
      assert.strictEqual(route.resource["process.pid"], process.pid)
      const send = spanNamed(spans, "Notifications.send")
      assert.isTrue(descendsFrom(spans, send, route))
      // The request's SQL statements are in its trace, under the service.
      assert.isTrue(spans.some((s) => s.kind === "client" && typeof s.attributes["db.query.text"] === "string" && descendsFrom(spans, s, send)))

      // Every export carried the configured headers, decoded.
      const exports = receiver.exports()
      assert.isAbove(exports.length, 0)
      for (const e of exports) {
        assert.strictEqual(e.headers["x-otlp-key"], "s3cr=t")
        assert.strictEqual(e.headers["x-tenant"], "herald-tests")
      }
    }))

  it.effect("a prompt answered: one trace from the route through the service into the prompt's entity and its transition", () =>
    Effect.gen(function*() {
      const receiver = yield* OtlpReceiverService
      const agent = yield* makeAgent(["interactions:create", "interactions:read"])
      yield* registerDevice(agent, "iphone-")
      const [createTrace, created] = yield* traced(agent.client.interactions.create({
        payload: { kind: "approval", title: "Deploy v2?", prompt: "3 migrations." }
      }))
      const id = created.interaction.id
      const [answerTrace, answered] = yield* traced(agent.app.interactions.answer({ params: { id }, payload: { status: "approved" } }))
      assert.strictEqual(answered.status, "approved")

      // Creation stores the prompt's expiry timer on its entity: the call is in the request's trace.
      const creation = yield* receiver.trace(createTrace, (s) => named(s, ["POST /api/agent/interactions", "Interactions.create", "Prompt.client.Expire"]))
      const expire = spanNamed(creation, "Prompt.client.Expire")
      assert.strictEqual(expire.kind, "client")
      assert.isTrue(descendsFrom(creation, expire, spanNamed(creation, "Interactions.create")))
      assert.isTrue(descendsFrom(creation, spanNamed(creation, "Interactions.create"), spanNamed(creation, "POST /api/agent/interactions")))

      const answer = yield* receiver.trace(
        answerTrace,
        (s) => named(s, ["POST /api/app/interactions/:id/answer", "Interactions.answer", "Prompt.client.Answer", "Prompt.Answer", "Transitions.apply"])
      )
      const route = spanNamed(answer, "POST /api/app/interactions/:id/answer")
      const service = spanNamed(answer, "Interactions.answer")
      const call = spanNamed(answer, "Prompt.client.Answer")
      const handler = spanNamed(answer, "Prompt.Answer")
      assert.isTrue(descendsFrom(answer, service, route))
      assert.isTrue(descendsFrom(answer, call, service))
      assert.strictEqual(call.kind, "client")
      // The entity's handler continues the caller's span from the message's envelope.
      assert.strictEqual(handler.kind, "server")
      assert.strictEqual(handler.parentSpanId, call.spanId)
      assert.strictEqual(handler.attributes["entity.type"], "Prompt")
      assert.strictEqual(handler.attributes["entity.id"], id)
      assert.isTrue(descendsFrom(answer, spanNamed(answer, "Transitions.apply"), handler))
    }))

  it.effect("a durable timer continues the trace that set it: a prompt's expiry fires under its creation's entity call", () =>
    Effect.gen(function*() {
      const receiver = yield* OtlpReceiverService
      const agent = yield* makeAgent(["interactions:create", "interactions:read"])
      const [createTrace, created] = yield* traced(agent.client.interactions.create({
        payload: { kind: "yes_no", title: "Still there?", prompt: "p", expiresInSeconds: 3600 }
      }))
      // What an hour's passing would do: the stored timer falls due now (test/support/prompts.ts).
      yield* moveDeadline(created.interaction.id, Date.now())
      const spans = yield* receiver.trace(createTrace, (s) => named(s, ["Prompt.client.Expire", "Prompt.Expire"]))
      const fired = spanNamed(spans, "Prompt.Expire")
      assert.strictEqual(fired.parentSpanId, spanNamed(spans, "Prompt.client.Expire").spanId)
      assert.strictEqual(fired.attributes["entity.id"], created.interaction.id)
      assert.strictEqual((yield* agent.client.interactions.get({ params: { id: created.interaction.id } })).status, "expired")
    }))

  it.effect("metrics arrive: the HTTP series, the cluster's gauges and the process's, with the node's resource", () =>
    Effect.gen(function*() {
      const receiver = yield* OtlpReceiverService
      const agent = yield* makeAgent(["notifications:send"])
      yield* agent.client.notifications.create({ payload: { title: "t", body: "b" } })
      const has = (name: string, point: (attributes: Attributes, value: number) => boolean) => (metrics: ReadonlyArray<ReceivedMetric>) =>
        metrics.some((m) => m.name === name && m.points.some((p) => point(p.attributes, p.value)))
      const requests = has("herald_http_requests_total", (a, v) => a.route === "/api/agent/notifications" && a.status === "201" && v >= 1)
      const entities = has("effect_cluster_entities", (a, v) => a.type === "Prompt" && v >= 0)
      const heap = has("herald_process_heap_used_bytes", (_, v) => v > 0)
      const metrics = yield* receiver.waitForMetrics((m) => requests(m) && entities(m) && heap(m))
      const series = metrics.find((m) => m.name === "herald_http_requests_total")!
      assert.strictEqual(series.type, "sum")
      assert.strictEqual(series.resource["service.name"], "herald")
      assert.strictEqual(metrics.find((m) => m.name === "effect_cluster_entities")?.type, "gauge")
      assert.strictEqual(metrics.find((m) => m.name === "herald_http_request_duration_seconds")?.type, "histogram")
    }))

  it.effect("no secret in a URL leaves in a trace: a route's credential and a secret-shaped query value show as …", () =>
    Effect.gen(function*() {
      const receiver = yield* OtlpReceiverService
      const hook = generateSecret("hlw")
      const token = generateSecret("hld")
      // Refused (no such token): the request's span records its URL all the same.
      const delivered = yield* rawFetch(`/hooks/${hook}`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })
      assert.isAtLeast(delivered.status, 400)
      yield* rawFetch(`/api/agent/interactions?access_token=${token}&limit=5`)
      yield* rawFetch("/no/such/route")
      const spans = yield* receiver.waitForSpans((s) =>
        s.some((x) => x.name === "POST /hooks/:token") &&
        s.some((x) => x.name === "GET /api/agent/interactions" && String(x.attributes["url.query"]).startsWith("access_token=")) &&
        s.some((x) => x.name === "GET" && x.attributes["url.path"] === "/…/…/…")
      )
      const inbound = spanNamed(spans, "POST /hooks/:token")
      assert.strictEqual(inbound.attributes["url.path"], "/hooks/…")
      assert.match(String(inbound.attributes["url.full"]), /^http:\/\/127\.0\.0\.1:\d+\/hooks\/…$/u)
      const listed = spans.find((x) => x.name === "GET /api/agent/interactions" && String(x.attributes["url.query"]).startsWith("access_token="))!
      assert.strictEqual(listed.attributes["url.query"], "access_token=…&limit=5")
      // Nowhere in anything sent: neither secret, nor its body without the prefix.
      for (const e of receiver.exports()) {
        for (const secret of [hook, token, hook.slice(4), token.slice(4)]) assert.notInclude(e.body, secret)
      }
    }))
})

describe("OTLP settings", () => {
  const parse = (env: Record<string, string>) => otlpConfig.parse(ConfigProvider.fromUnknown(env))
  const refusal = (env: Record<string, string>) =>
    Effect.map(Effect.exit(parse(env)), (exit) => {
      assert.isTrue(Exit.isFailure(exit), JSON.stringify(env))
      return String(Exit.isFailure(exit) ? exit.cause : "")
    })

  it.effect("defaults: no endpoint, service `herald`, protobuf, spans every 5 s and metrics every minute", () =>
    Effect.gen(function*() {
      const config = yield* parse({})
      assert.isTrue(Option.isNone(config.endpoint))
      assert.strictEqual(config.serviceName, "herald")
      assert.strictEqual(config.protocol, "http/protobuf")
      assert.isTrue(Duration.equals(config.traceInterval, Duration.seconds(5)))
      assert.isTrue(Duration.equals(config.metricInterval, Duration.minutes(1)))
      assert.isTrue(Option.isNone((yield* parse({ OTEL_EXPORTER_OTLP_ENDPOINT: "  " })).endpoint), "blank is unset")
    }))

  it.effect("each signal's URL is the endpoint's path with /v1/<signal> added", () =>
    Effect.sync(() => {
      assert.strictEqual(signalUrl("http://collector:4318", "traces"), "http://collector:4318/v1/traces")
      assert.strictEqual(signalUrl("http://collector:4318/", "metrics"), "http://collector:4318/v1/metrics")
      assert.strictEqual(signalUrl("https://otlp.example.test/ingest/otlp", "traces"), "https://otlp.example.test/ingest/otlp/v1/traces")
    }))

  it.effect("refuses a wrong value at start, naming the variable and never a header's value", () =>
    Effect.gen(function*() {
      assert.include(yield* refusal({ OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" }), "OTEL_EXPORTER_OTLP_ENDPOINT must be an http:// or https:// URL")
      assert.include(yield* refusal({ OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" }), "OTEL_EXPORTER_OTLP_PROTOCOL")
      assert.include(yield* refusal({ OTEL_BSP_SCHEDULE_DELAY: "0" }), "OTEL_BSP_SCHEDULE_DELAY must be at least 1")
      const headers = yield* refusal({ OTEL_EXPORTER_OTLP_HEADERS: "x-ok=1,sekrit-key-without-value" })
      assert.include(headers, "OTEL_EXPORTER_OTLP_HEADERS must be comma-separated key=value pairs")
      assert.include(headers, "entry 2")
      assert.notInclude(headers, "sekrit")
      assert.include(yield* refusal({ OTEL_EXPORTER_OTLP_HEADERS: "x-key=%E0%A4%A" }), "entry 1")
    }))

  // Live: closing the exporters sends what they hold (the metrics exporter always sends), on the real clock.
  it.live("without an endpoint nothing is built: the native tracer stays; with one, the OTLP tracer is in place", () =>
    Effect.scoped(Effect.gen(function*() {
      const receiver = yield* otlpReceiver
      const tracerWith = (env: Record<string, string>) => Effect.provide(Tracer.Tracer, OtlpLayer.pipe(Layer.provide(withEnv(env))))
      assert.strictEqual(yield* tracerWith({}), Tracer.nativeTracer)
      assert.notStrictEqual(yield* tracerWith(receiver.env), Tracer.nativeTracer)
    })))
})

describe("herald serve", () => {
  it.live("exports its own spans, with its process's resource, when OTEL_EXPORTER_OTLP_ENDPOINT is set", () =>
    Effect.scoped(Effect.gen(function*() {
      const receiver = yield* otlpReceiver
      const { env } = yield* childDatabase
      // Made before the server starts: the embedded database is one process's at a time.
      const person = yield* cliJson<{ id: string }>(["admin", "user", "create", "--email", "otlp@example.test", "--name", "Otlp"], env)
      const session = yield* cliJson<{ token: string }>(["admin", "session", "create", "--user", person.id], env)
      const server = yield* startServer({ ...env, ...receiver.env, OTEL_SERVICE_NAME: "herald-node-a" })
      const app = yield* Effect.provide(Effect.service(HeraldPersonClient), HeraldPersonClient.layer({ baseUrl: server.baseUrl, token: session.token, retries: 0 }))
      const created = yield* app.tokens.create({ payload: { name: "otlp", scopes: ["notifications:send"] } })
      const agent = yield* Effect.provide(Effect.service(HeraldClient), HeraldClient.layer({ baseUrl: server.baseUrl, token: created.secret, retries: 0 }))
      const [traceId] = yield* traced(agent.notifications.create({ payload: { title: "From a process", body: "b" } }))

      const spans = yield* receiver.trace(traceId, (s) => named(s, ["POST /api/agent/notifications", "Notifications.send"]))
      const route = spanNamed(spans, "POST /api/agent/notifications")
      assert.strictEqual(route.resource["service.name"], "herald-node-a")
      assert.strictEqual(route.resource["process.pid"], server.child.pid)
      assert.isTrue(descendsFrom(spans, spanNamed(spans, "Notifications.send"), route))
      assert.include(server.output(), "exporting traces and metrics over OTLP to 127.0.0.1:")
    })), { timeout: 120_000 })
})
