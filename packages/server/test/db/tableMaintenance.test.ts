/**
 * Table maintenance against a real database (PostgreSQL, or the embedded
 * PGlite where none is configured): one pass vacuums a queue table whose dead
 * rows passed the threshold (its dead rows are gone, its partial index holds
 * only live entries), leaves a table under the threshold alone, passes over a
 * listed table that does not exist, and a pass started while one runs does
 * nothing. The rules themselves are checked on counts alone.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { TestSqlLayer } from "../../../../test/support/database.ts"
import { eventually } from "../../../../test/support/eventually.ts"
import { MaintenanceConfig, makeMaintenanceConfig } from "../../src/config/MaintenanceConfig.ts"
import { decide, QUEUE_TABLES, TableMaintenance } from "../../src/db/TableMaintenance.ts"
import { TableMaintenanceRepo, type TableStats } from "../../src/db/TableMaintenanceRepo.ts"

const config = makeMaintenanceConfig(30)

const TestLayer = TableMaintenance.layerNoDeps.pipe(
  Layer.provideMerge(TableMaintenanceRepo.layer),
  Layer.provide(Layer.succeed(MaintenanceConfig, config)),
  Layer.provideMerge(TestSqlLayer)
)

/**
 * Runs `statements` in one transaction and flushes its counts to the statistics at once: a
 * backend otherwise reports them at most once a second, after it goes idle.
 */
const churn = (statements: (sql: SqlClient.SqlClient) => Effect.Effect<unknown, unknown>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql.withTransaction(Effect.andThen(statements(sql), sql`SELECT pg_stat_force_next_flush()`)).pipe(Effect.orDie)
  })

/** The table's counts once the statistics show at least `dead` dead rows. */
const statsOnceDead = (table: string, dead: number) =>
  Effect.flatMap(TableMaintenanceRepo, (repo) =>
    eventually(repo.stats([table]).pipe(Effect.orDie), (rows) => (rows[0]?.deadTuples ?? 0) >= dead)).pipe(Effect.map((rows) => rows[0]!))

const stats = (table: string) =>
  Effect.flatMap(TableMaintenanceRepo, (repo) => repo.stats([table]).pipe(Effect.orDie, Effect.map((rows) => rows[0]!)))

/** The planner's count of an index's entries, which VACUUM sets from what it kept. */
const indexEntries = (index: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ entries: number }>`SELECT reltuples::float8 AS entries FROM pg_class WHERE relname = ${index}`.pipe(
      Effect.orDie,
      Effect.map((rows) => rows[0]!.entries)
    ))

layer(TestLayer, { timeout: "120 seconds" })("table maintenance", (it) => {
  it.effect("a queue table past the threshold is vacuumed by one pass, its partial index emptied of the dead entries", () =>
    Effect.gen(function*() {
      const maintenance = yield* TableMaintenance
      // 5,000 deliveries queued then delivered: every update takes the row out of the partial
      // due index (`WHERE status IN ('pending', 'retrying')`), leaving a dead row and a dead entry.
      yield* churn((sql) =>
        Effect.andThen(
          sql`INSERT INTO users (id, email, name) VALUES ('usr_tm', 'tm@example.com', 'tm')`,
          sql`INSERT INTO reply_webhook_deliveries (id, user_id, type, payload, next_attempt_at)
              SELECT 'rwd_' || g, 'usr_tm', 'interaction.answered', '{}', now() FROM generate_series(1, 5000) g`
        ))
      yield* churn((sql) => sql`UPDATE reply_webhook_deliveries SET status = 'delivered', next_attempt_at = NULL WHERE user_id = 'usr_tm'`)
      const before = yield* statsOnceDead("reply_webhook_deliveries", 5000)
      assert.isNull(before.sinceVacuum)

      const report = yield* maintenance.pass()
      assert.isFalse(report.skipped)
      const outcome = report.outcomes.find((o) => o.table === "reply_webhook_deliveries")
      assert.deepInclude(outcome, { action: "vacuum", deadTuples: before.deadTuples })
      assert.isUndefined(outcome?.error)

      const after = yield* stats("reply_webhook_deliveries")
      assert.strictEqual(after.deadTuples, 0)
      assert.isNotNull(after.sinceVacuum)
      assert.isNotNull(after.sinceAnalyze)
      assert.strictEqual(yield* indexEntries("reply_webhook_deliveries_due_idx"), 0)

      // Done: the next pass finds nothing past the thresholds there.
      const again = yield* maintenance.pass(["reply_webhook_deliveries"])
      assert.deepStrictEqual(again.outcomes, [])
    }))

  it.effect("a table under the threshold is left alone", () =>
    Effect.gen(function*() {
      const maintenance = yield* TableMaintenance
      yield* churn((sql) =>
        Effect.andThen(
          sql`INSERT INTO outbox_nodes (node) SELECT 'node-' || g FROM generate_series(1, 300) g`,
          sql`DELETE FROM outbox_nodes WHERE node LIKE 'node-%'`
        ))
      const before = yield* statsOnceDead("outbox_nodes", 300)
      const report = yield* maintenance.pass(["outbox_nodes"])
      assert.deepStrictEqual(report, { skipped: false, outcomes: [] })
      const after = yield* stats("outbox_nodes")
      assert.isNull(after.sinceVacuum)
      assert.strictEqual(after.deadTuples, before.deadTuples)
    }))

  it.effect("a listed table missing from the database is passed over", () =>
    Effect.gen(function*() {
      const maintenance = yield* TableMaintenance
      const report = yield* maintenance.pass([...QUEUE_TABLES, "no_such_queue"])
      assert.isFalse(report.skipped)
      assert.isFalse(report.outcomes.some((o) => o.table === "no_such_queue" || o.error !== undefined))
    }))

  it.effect("a pass started while another runs is skipped", () =>
    Effect.gen(function*() {
      const maintenance = yield* TableMaintenance
      const [first, second] = yield* Effect.all([maintenance.pass(), maintenance.pass()], { concurrency: "unbounded" })
      assert.deepStrictEqual([first.skipped, second.skipped].sort(), [false, true])
    }))
})

describe("the rules of a pass", () => {
  const table = (counts: Partial<TableStats>): TableStats => ({
    tableName: "q",
    liveTuples: 10_000,
    deadTuples: 0,
    modifiedSinceAnalyze: 0,
    sinceVacuum: null,
    sinceAutovacuum: null,
    sinceAnalyze: null,
    vacuumRunning: false,
    ...counts
  })

  it("vacuums past 1,000 + 10 % of the live rows", () => {
    assert.isUndefined(decide(table({ deadTuples: 2_000 }), config))
    assert.strictEqual(decide(table({ deadTuples: 2_001 }), config), "vacuum")
  })

  it("leaves a table autovacuum handled within two intervals, or is vacuuming now", () => {
    assert.isUndefined(decide(table({ deadTuples: 5_000, sinceAutovacuum: 59 }), config))
    assert.strictEqual(decide(table({ deadTuples: 5_000, sinceAutovacuum: 61 }), config), "vacuum")
    assert.isUndefined(decide(table({ deadTuples: 5_000, vacuumRunning: true }), config))
  })

  it("never vacuums a history table (push_receipts), however many dead rows; analyzes it past 1,000 + 50 % of its rows", () => {
    const receipts = (counts: Partial<TableStats>) => table({ tableName: "push_receipts", ...counts })
    assert.isUndefined(decide(receipts({ deadTuples: 1_000_000 }), config))
    assert.isUndefined(decide(receipts({ deadTuples: 1_000_000, modifiedSinceAnalyze: 6_000 }), config))
    assert.strictEqual(decide(receipts({ deadTuples: 1_000_000, modifiedSinceAnalyze: 6_001 }), config), "analyze")
  })

  it("analyzes a table whose rows changed past the threshold since its last ANALYZE", () => {
    assert.strictEqual(decide(table({ modifiedSinceAnalyze: 2_001 }), config), "analyze")
    assert.isUndefined(decide(table({ modifiedSinceAnalyze: 2_001, sinceAnalyze: 10 }), config))
    assert.isUndefined(decide(table({ modifiedSinceAnalyze: 2_000 }), config))
  })
})
