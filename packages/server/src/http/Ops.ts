/**
 * Operator routes outside both APIs: liveness, readiness and metrics.
 * `/healthz` answers while the process runs; `/readyz` only when the database
 * answers and every migration this build knows is applied. `Readiness.probe`
 * also keeps `herald_db_up` current without anyone asking (a worker,
 * `runtime/Workers.ts`, runs it every `Readiness.every`).
 */
import { Context, Duration, Effect, Layer, Metric } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { PrometheusMetrics } from "effect/observability"
import { latestKnownMigration } from "../db/Migrations.ts"
import { ReadinessRepo } from "../db/Readiness.ts"

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

export const OpsRoutes = Layer.mergeAll(
  HttpRouter.add("GET", "/healthz", HttpServerResponse.jsonUnsafe({ ok: true })),
  HttpRouter.use((router) =>
    Effect.gen(function*() {
      const readiness = yield* Readiness
      yield* router.add("GET", "/readyz", Effect.map(readiness.probe, (r) => HttpServerResponse.jsonUnsafe(r.body, { status: r.status })))
    })
  ).pipe(Layer.provide(Readiness.layer)),
  PrometheusMetrics.layerHttp({ path: "/metrics" })
)
