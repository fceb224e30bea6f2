/**
 * The readiness query of `/readyz` and its self-probe: the newest migration
 * applied to the database (0 before any). A module of its own because it reads
 * the migrator's table, which no capability owns.
 */
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import type { SqlError } from "effect/sql"

export class ReadinessRepo extends Context.Service<ReadinessRepo, {
  readonly appliedMigration: Effect.Effect<number, SqlError.SqlError | Schema.SchemaError>
}>()("herald/ReadinessRepo") {
  static readonly layer = Layer.effect(ReadinessRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const latest = SqlSchema.findAll({
      Request: Schema.Void,
      Result: Schema.Struct({ id: Schema.NullOr(Schema.Number) }),
      execute: () => sql`SELECT max(migration_id)::int AS id FROM herald_migrations`
    })
    return ReadinessRepo.of({ appliedMigration: Effect.map(latest(undefined), (rows) => rows[0]?.id ?? 0) })
  }))
}
