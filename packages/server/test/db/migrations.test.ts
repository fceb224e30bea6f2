/**
 * Migrations at start are safe from two processes at once: concurrent runs on
 * one database serialise, every migration is applied exactly once, and a
 * second run finds nothing to do.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { EmptySqlLayer } from "../../../../test/support/database.ts"
import { latestKnownMigration, runMigrations } from "../../src/db/Migrations.ts"

layer(Layer.mergeAll(EmptySqlLayer), { excludeTestServices: true, timeout: "120 seconds" })("migrations", (it) => {
  it.effect("concurrent runs apply each migration once", () =>
    Effect.gen(function*() {
      const runs = yield* Effect.all([runMigrations, runMigrations, runMigrations], { concurrency: "unbounded" })
      const applied = runs.flat().map(([id]) => id)
      const latest = yield* latestKnownMigration
      assert.deepStrictEqual(applied.sort((a, b) => a - b), Array.from({ length: latest }, (_, i) => i + 1))
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ migrationId: number }>`SELECT migration_id FROM herald_migrations ORDER BY migration_id`
      assert.deepStrictEqual(rows.map((r) => Number(r.migrationId)), Array.from({ length: latest }, (_, i) => i + 1))
      assert.deepStrictEqual(yield* runMigrations, [])
    }))
})
