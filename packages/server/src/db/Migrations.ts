/**
 * Applies the numbered migrations at start. Two processes starting at once
 * (two servers, or a server and `herald migrate`) serialise on a transaction-
 * scoped advisory lock taken before the migrator's own table lock, so the
 * loser waits and then finds nothing left to run. The usual start, with every
 * migration already applied, is one read and neither lock.
 */
import { Effect, Layer } from "effect"
import { Migrator, SqlClient } from "effect/sql"
import { loader } from "../../../../migrations/index.ts"
import { ReadinessRepo } from "./ReadinessRepo.ts"

const MigrationLockKey = 0x4865_7261 // "Hera"

const migrator = Migrator.make({})

/** The latest migration id this build knows, for /readyz. */
export const latestKnownMigration = Effect.map(loader, (all) => all.reduce((max, [id]) => Math.max(max, id), 0))

/** The newest migration applied; 0 when none is or the migrator's table is not there yet (the migrator then makes it). */
const appliedMigration = Effect.flatMap(ReadinessRepo, (repo) => repo.appliedMigration).pipe(
  Effect.provide(ReadinessRepo.layer),
  Effect.orElseSucceed(() => 0)
)

export const runMigrations = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // Ids only grow (migrations/index.ts), so the newest applied being the newest known means nothing is left to run.
  if ((yield* appliedMigration) >= (yield* latestKnownMigration)) return []
  return yield* sql.withTransaction(
    sql`SELECT pg_advisory_xact_lock(${MigrationLockKey})`.pipe(
      Effect.andThen(migrator({ loader, table: "herald_migrations" }))
    )
  )
}).pipe(Effect.withSpan("Migrations.run"))

export const MigrationsLayer = Layer.effectDiscard(runMigrations)
