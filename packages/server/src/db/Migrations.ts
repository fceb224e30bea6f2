/**
 * Applies the numbered migrations at start. Two processes starting at once
 * (two servers, or a server and `herald migrate`) serialise on a transaction-
 * scoped advisory lock taken before the migrator's own table lock, so the
 * loser waits and then finds nothing left to run.
 */
import { Effect, Layer } from "effect"
import { Migrator, SqlClient } from "effect/sql"
import { loader } from "../../../../migrations/index.ts"

const MigrationLockKey = 0x4865_7261 // "Hera"

const migrator = Migrator.make({})

export const runMigrations = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return yield* sql.withTransaction(
    sql`SELECT pg_advisory_xact_lock(${MigrationLockKey})`.pipe(
      Effect.andThen(migrator({ loader, table: "herald_migrations" }))
    )
  )
}).pipe(Effect.withSpan("Migrations.run"))

/** The latest migration id this build knows, for /readyz. */
export const latestKnownMigration = Effect.map(loader, (all) => all.reduce((max, [id]) => Math.max(max, id), 0))

export const MigrationsLayer = Layer.effectDiscard(runMigrations)
