/**
 * Operator routes outside both APIs: liveness, readiness and metrics.
 * `/healthz` answers while the process runs; `/readyz` only when the database
 * answers and every migration this build knows is applied.
 */
import { Effect, Layer, Metric, Schedule } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { PrometheusMetrics } from "effect/observability"
import { SqlClient } from "effect/sql"
import { latestKnownMigration } from "../db/Migrations.ts"
import { ProcessMetricsLayer } from "../observability/ProcessMetrics.ts"

const dbUp = Metric.gauge("herald_db_up", { description: "1 when the last readiness probe reached the database." })
const SELF_PROBE_INTERVAL = "15 seconds"

export const OpsRoutes = Layer.mergeAll(
  HttpRouter.add("GET", "/healthz", HttpServerResponse.jsonUnsafe({ ok: true })),
  HttpRouter.use((router) =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const expected = yield* latestKnownMigration.pipe(Effect.orDie)
      const probe = sql<{ id: number | null }>`SELECT max(migration_id)::int AS id FROM herald_migrations`.pipe(
        Effect.timeout("2 seconds"),
        Effect.map(([row]) => (row?.id ?? 0) >= expected
          ? { status: 200, body: { ok: true, migration: row?.id ?? 0 } }
          : { status: 503, body: { ok: false, error: "Migrations are not applied yet.", code: "NOT_READY" } }),
        Effect.catchCause(() => Effect.succeed({ status: 503, body: { ok: false, error: "The database does not answer.", code: "NOT_READY" } })),
        Effect.tap((r) => Metric.update(dbUp, r.status === 200 ? 1 : 0))
      )
      // The gauge holds without anyone probing: the process probes itself too.
      yield* Effect.forkScoped(Effect.repeat(probe, Schedule.spaced(SELF_PROBE_INTERVAL)))
      yield* router.add("GET", "/readyz", Effect.map(probe, (r) => HttpServerResponse.jsonUnsafe(r.body, { status: r.status })))
    })
  ),
  PrometheusMetrics.layerHttp({ path: "/metrics" }),
  ProcessMetricsLayer
)
