/**
 * Operator routes outside both APIs: liveness, readiness and metrics.
 * `/healthz` answers while the process runs; `/readyz` only when the database
 * answers and every migration this build knows is applied. `Readiness.probe`
 * also keeps `herald_db_up` current without anyone asking (a worker,
 * `runtime/Workers.ts`, runs it every `Readiness.every`). `/metrics` is on
 * the API listener unless a metrics port moves it to a listener of its own
 * (runtime/MetricsListener.ts), and asks for a bearer when a metrics token is
 * set (config/MetricsConfig.ts).
 */
import { Context, Duration, Effect, Layer, Metric, Option, Redacted } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { PrometheusMetrics } from "effect/observability"
import { createHash, timingSafeEqual } from "node:crypto"
import { MetricsConfig } from "../config/MetricsConfig.ts"
import { latestKnownMigration } from "../db/Migrations.ts"
import { ReadinessRepo } from "../db/ReadinessRepo.ts"

const dbUp = Metric.gauge("herald_db_up", { description: "1 when the last readiness probe reached the database." })

export interface ProbeResult {
  readonly status: 200 | 503
  readonly body: Record<string, unknown>
}

export class Readiness extends Context.Service<Readiness, {
  /** Asks the database, records the answer in `herald_db_up`, and says what `/readyz` answers. */
  readonly probe: Effect.Effect<ProbeResult>
  readonly every: Duration.Duration
}>()("herald/Readiness") {
  static readonly layerNoDeps = Layer.effect(Readiness, Effect.gen(function*() {
    const repo = yield* ReadinessRepo
    const expected = yield* latestKnownMigration.pipe(Effect.orDie)
    const probe = repo.appliedMigration.pipe(
      Effect.timeout("2 seconds"),
      Effect.map((id): ProbeResult => id >= expected
        ? { status: 200, body: { ok: true, migration: id } }
        : { status: 503, body: { ok: false, error: "Migrations are not applied yet.", code: "NOT_READY" } }),
      Effect.catchCause(() =>
        Effect.succeed<ProbeResult>({ status: 503, body: { ok: false, error: "The database does not answer.", code: "NOT_READY" } })
      ),
      Effect.tap((r) => Metric.update(dbUp, r.status === 200 ? 1 : 0))
    )
    return Readiness.of({ probe, every: Duration.seconds(15) })
  }))

  /** Needs `SqlClient`. */
  static readonly layer = Readiness.layerNoDeps.pipe(Layer.provide(ReadinessRepo.layer))
}

const scrape = Effect.map(PrometheusMetrics.format(), (body) =>
  HttpServerResponse.text(body, { contentType: "text/plain; version=0.0.4; charset=utf-8" }))

const unauthorized = HttpServerResponse.jsonUnsafe(
  { error: "A metrics scrape must send the metrics token: Authorization: Bearer <HERALD_METRICS_TOKEN>.", code: "UNAUTHORIZED" },
  { status: 401, headers: { "www-authenticate": "Bearer realm=\"herald-metrics\"" } }
)

// Digests of equal length, so the comparison takes the same time whatever was sent.
const digest = (text: string) => createHash("sha256").update(text).digest()

/** `GET /metrics`: the Prometheus text, behind the metrics token when one is set. */
export const MetricsRoute = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const { token } = yield* MetricsConfig
    if (Option.isNone(token)) return yield* router.add("GET", "/metrics", scrape)
    const expected = digest(Redacted.value(token.value))
    yield* router.add(
      "GET",
      "/metrics",
      Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
        const sent = /^Bearer +(\S+) *$/i.exec(request.headers["authorization"] ?? "")?.[1]
        return sent !== undefined && timingSafeEqual(digest(sent), expected) ? scrape : Effect.succeed(unauthorized)
      })
    )
  })
)

/** The API listener's operator routes: `/metrics` among them only when no metrics port is set. */
export const OpsRoutes = Layer.mergeAll(
  HttpRouter.add("GET", "/healthz", HttpServerResponse.jsonUnsafe({ ok: true })),
  HttpRouter.use((router) =>
    Effect.gen(function*() {
      const readiness = yield* Readiness
      yield* router.add("GET", "/readyz", Effect.map(readiness.probe, (r) => HttpServerResponse.jsonUnsafe(r.body, { status: r.status })))
    })
  ).pipe(Layer.provide(Readiness.layer)),
  Layer.unwrap(Effect.map(MetricsConfig, (config) => Option.isSome(config.port) ? Layer.empty : MetricsRoute))
)
