/**
 * The SQL of table maintenance (db/TableMaintenance.ts): the statistics
 * collector's counts of a list of tables, and VACUUM / ANALYZE of one table.
 * Both databases answer the same way: PGlite (PostgreSQL 18 in WebAssembly)
 * keeps `pg_stat_user_tables` and runs VACUUM like PostgreSQL; it only has no
 * autovacuum process to do it unasked.
 */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import type { SqlError } from "effect/sql"

export interface TableStats {
  readonly tableName: string
  readonly liveTuples: number
  readonly deadTuples: number
  readonly modifiedSinceAnalyze: number
  /** Seconds since the last VACUUM, manual or automatic; null when the table was never vacuumed. */
  readonly sinceVacuum: number | null
  /** Seconds since autovacuum last vacuumed the table; null when it never did (always, where it is off). */
  readonly sinceAutovacuum: number | null
  /** Seconds since the last ANALYZE, manual or automatic (a VACUUM (ANALYZE) counts). */
  readonly sinceAnalyze: number | null
  /** A VACUUM of the table is running now: autovacuum's, or another Herald node's. */
  readonly vacuumRunning: boolean
}

export class TableMaintenanceRepo extends Context.Service<TableMaintenanceRepo, {
  /** The counts of those of `tables` that exist in the current schema; a missing table is simply not answered. */
  readonly stats: (tables: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<TableStats>, SqlError.SqlError>
  /** VACUUM (ANALYZE) of one table, on a connection of its own. */
  readonly vacuum: (table: string) => Effect.Effect<void, SqlError.SqlError>
  /** ANALYZE of one table, on a connection of its own. */
  readonly analyze: (table: string) => Effect.Effect<void, SqlError.SqlError>
}>()("herald/TableMaintenanceRepo") {
  static readonly layer = Layer.effect(TableMaintenanceRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    // Counts are bigint (strings from the driver) and times are compared in the database's own
    // clock, so neither the driver's types nor a skew between the two clocks matters.
    const stats = (tables: ReadonlyArray<string>) =>
      sql<TableStats>`
        SELECT s.relname AS table_name, s.n_live_tup::float8 AS live_tuples, s.n_dead_tup::float8 AS dead_tuples,
          s.n_mod_since_analyze::float8 AS modified_since_analyze,
          EXTRACT(EPOCH FROM now() - GREATEST(s.last_vacuum, s.last_autovacuum))::float8 AS since_vacuum,
          EXTRACT(EPOCH FROM now() - s.last_autovacuum)::float8 AS since_autovacuum,
          EXTRACT(EPOCH FROM now() - GREATEST(s.last_analyze, s.last_autoanalyze))::float8 AS since_analyze,
          EXISTS (SELECT 1 FROM pg_stat_progress_vacuum p WHERE p.relid = s.relid) AS vacuum_running
        FROM pg_stat_user_tables s
        WHERE s.schemaname = current_schema() AND s.relname = ANY(${[...tables]}::text[])`

    // VACUUM refuses to run in a transaction block, and on a multiplexed pool connection it would
    // hold up every statement pipelined behind it: it gets a connection reserved for it alone, and
    // is sent unprepared (a utility statement has nothing to cache). The name comes from the fixed
    // list of tables in TableMaintenance.ts, never from a request; it is quoted all the same.
    const onItsOwnConnection = (statement: string) =>
      Effect.scoped(Effect.flatMap(sql.reserve, (connection) => connection.executeUnprepared(statement, [], undefined))).pipe(
        Effect.asVoid
      )
    const quoted = (table: string) => `"${table.replace(/"/g, "\"\"")}"`

    return TableMaintenanceRepo.of({
      stats,
      // SKIP_LOCKED: a table autovacuum or another node is vacuuming is skipped, not waited for.
      // INDEX_CLEANUP ON: the default (auto) skips the indexes when few pages hold dead rows, and the
      // dead entries of a queue's partial index are exactly what its claim walks through.
      // TRUNCATE false: giving back the empty tail of the file takes an exclusive lock that stalls
      // the queue's writers, for space the queue takes again within minutes.
      vacuum: (table) => onItsOwnConnection(`VACUUM (ANALYZE, SKIP_LOCKED, INDEX_CLEANUP ON, TRUNCATE false) ${quoted(table)}`),
      analyze: (table) => onItsOwnConnection(`ANALYZE (SKIP_LOCKED) ${quoted(table)}`)
    })
  }))
}
