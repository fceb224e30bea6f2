/**
 * Table maintenance: Herald vacuums and analyzes its own queue tables.
 *
 * Rows of a queue are updated in place (pending → sending → sent) and many of
 * those updates change a column of an index or of a partial index's
 * predicate, so each leaves a dead row and dead index entries behind. Only
 * VACUUM removes them, and only ANALYZE refreshes the statistics the planner
 * chooses a claim's plan by. The embedded database (PGlite) has no autovacuum
 * at all, and PostgreSQL runs without it wherever an operator turned it off
 * (our CI does): there a claim that scans a queue's partial index walks every
 * row the queue ever held, and its cost grows with the history (issue 31).
 *
 * So every `every` (HERALD_TABLE_MAINTENANCE_INTERVAL_SECONDS) a pass reads
 * `pg_stat_user_tables` for the tables below and, per table:
 * - VACUUM (ANALYZE) when its dead rows pass `vacuumBase + vacuumScale × live`
 *   and autovacuum has not vacuumed it within two intervals;
 * - else ANALYZE when the rows changed since the last ANALYZE pass
 *   `analyzeBase + analyzeScale × live` and none ran within two intervals;
 * - nothing while a VACUUM of it is running (autovacuum's, another node's).
 * Where autovacuum keeps up, a pass finds nothing past the thresholds.
 *
 * A pass vacuums one table at a time, on a connection of its own (never in a
 * transaction). A pass that starts while another is running is skipped. A
 * failure on one table (dropped meanwhile, a lock) is logged and the pass goes
 * on with the next.
 */
import { Context, Duration, Effect, Layer, Metric, Option, Semaphore } from "effect"
import { MaintenanceConfig, type MaintenanceConfigShape } from "../config/MaintenanceConfig.ts"
import { TableMaintenanceRepo, type TableStats } from "./TableMaintenanceRepo.ts"

/**
 * Herald's tables whose rows are updated in place or deleted at a high rate. A
 * table missing from the database (`push_queue` before migration 0015, the
 * cluster's tables before its storage first starts) is passed over.
 */
export const QUEUE_TABLES: ReadonlyArray<string> = [
  // push: the queue of due sends (0015) and the receipts it was split from (analyzed only: ANALYZE_ONLY)
  "push_queue",
  "push_receipts",
  "outbox_nodes",
  // live activities: the per-device operation queue, and the activity row every update rewrites
  "live_activity_operations",
  "live_activities",
  // reply webhooks and connectors
  "reply_webhook_deliveries",
  "connector_deliveries",
  // the person's inbox (read flags) and feed (results written back)
  "inbox_items",
  "activity_feed",
  // the per-token rate-limit budgets on PostgreSQL (0021): a row rewritten by every counted request
  "rate_limit_budgets",
  // effect/cluster's SqlMessageStorage: entity mailboxes and timers (live activities, prompts, pages),
  // marked processed in place and deleted when done
  "cluster_messages",
  "cluster_replies"
]

/**
 * Tables on the list that are history rather than queues: analyzed (the
 * planner's estimates), never vacuumed here. Since migration 0015 no claim
 * reads `push_receipts`' dead entries, most of its updates are HOT and pruned
 * in place, and a VACUUM of it costs as much as the history it holds (5.8 s a
 * pass at 3M receipts in the soak, every minute at 2,000 notifications/s, and
 * growing): autovacuum, where it runs, does it at its own pace (migration 0016).
 */
export const ANALYZE_ONLY: ReadonlySet<string> = new Set(["push_receipts"])

export type Action = "vacuum" | "analyze"

/** What one pass did to one table. */
export interface TableOutcome {
  readonly table: string
  readonly action: Action
  readonly deadTuples: number
  readonly liveTuples: number
  readonly seconds: number
  /** Set when the statement failed; the pass went on with the next table. */
  readonly error?: string
}

export interface PassReport {
  /** True when another pass was still running: this one did nothing. */
  readonly skipped: boolean
  readonly outcomes: ReadonlyArray<TableOutcome>
}

/** The rules of a pass, for one table's counts; undefined leaves it alone. */
export const decide = (stats: TableStats, config: MaintenanceConfigShape): Action | undefined => {
  if (stats.vacuumRunning) return undefined
  const recent = 2 * Duration.toSeconds(config.every)
  const within = (seconds: number | null) => seconds !== null && seconds < recent
  if (
    !ANALYZE_ONLY.has(stats.tableName) &&
    stats.deadTuples > config.vacuumBase + config.vacuumScale * stats.liveTuples && !within(stats.sinceAutovacuum)
  ) {
    return "vacuum"
  }
  const scale = ANALYZE_ONLY.has(stats.tableName) ? config.historyAnalyzeScale : config.analyzeScale
  if (stats.modifiedSinceAnalyze > config.analyzeBase + scale * stats.liveTuples && !within(stats.sinceAnalyze)) {
    return "analyze"
  }
  return undefined
}

/** Tables vacuumed or analyzed, by table and action. */
export const maintenanceTotal = Metric.counter("herald_table_maintenance_total", {
  description: "VACUUM (ANALYZE) and ANALYZE statements run by the table-maintenance worker, by table and action.",
  incremental: true
})

/** Seconds those statements took, by action: on the embedded database no other statement runs meanwhile. */
export const maintenanceSeconds = Metric.counter("herald_table_maintenance_seconds_total", {
  description: "Seconds spent in VACUUM and ANALYZE by the table-maintenance worker, by action.",
  incremental: true
})

export class TableMaintenance extends Context.Service<TableMaintenance, {
  readonly enabled: boolean
  readonly every: Duration.Duration
  /** One pass over `tables` (default: QUEUE_TABLES). */
  readonly pass: (tables?: ReadonlyArray<string>) => Effect.Effect<PassReport>
}>()("herald/TableMaintenance") {
  static readonly layerNoDeps = Layer.effect(TableMaintenance, Effect.gen(function*() {
    const repo = yield* TableMaintenanceRepo
    const config = yield* MaintenanceConfig
    const running = yield* Semaphore.make(1)

    const run = (stats: TableStats, action: Action) =>
      (action === "vacuum" ? repo.vacuum(stats.tableName) : repo.analyze(stats.tableName)).pipe(
        Effect.timed,
        Effect.map(([elapsed]) => Duration.toMillis(elapsed) / 1000),
        Effect.tap((seconds) =>
          Effect.all([
            Metric.update(Metric.withAttributes(maintenanceTotal, { table: stats.tableName, action }), 1),
            Metric.update(Metric.withAttributes(maintenanceSeconds, { action }), seconds)
          ])),
        Effect.map((seconds): TableOutcome => ({
          table: stats.tableName,
          action,
          deadTuples: stats.deadTuples,
          liveTuples: stats.liveTuples,
          seconds
        })),
        Effect.catch((error) =>
          Effect.as(
            Effect.logWarning(`table maintenance: ${action} of ${stats.tableName} failed`, error),
            { table: stats.tableName, action, deadTuples: stats.deadTuples, liveTuples: stats.liveTuples, seconds: 0, error: String(error) }
          ))
      )

    const once = (tables: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const all = yield* repo.stats(tables)
        const outcomes: Array<TableOutcome> = []
        // Most dead rows first: when a pass is cut short (shutdown), the worst table was done.
        for (const stats of [...all].sort((a, b) => b.deadTuples - a.deadTuples)) {
          const action = decide(stats, config)
          if (action === undefined) continue
          const outcome = yield* run(stats, action)
          outcomes.push(outcome)
          yield* Effect.logDebug(
            `table maintenance: ${action} ${outcome.table} (${outcome.deadTuples} dead, ${outcome.liveTuples} live rows) ` +
              `in ${outcome.seconds.toFixed(3)} s`
          )
        }
        return outcomes
      })

    const pass = (tables: ReadonlyArray<string> = QUEUE_TABLES) =>
      running.withPermitsIfAvailable(1)(once(tables)).pipe(
        Effect.map(Option.match({
          onNone: (): PassReport => ({ skipped: true, outcomes: [] }),
          onSome: (outcomes): PassReport => ({ skipped: false, outcomes })
        })),
        Effect.tap((report) => report.skipped ? Effect.logDebug("table maintenance: a pass is still running; skipped") : Effect.void),
        // The catalog read failing (the database away) fails no request: the next pass tries again.
        Effect.catch((error) => Effect.as(Effect.logWarning("table maintenance: cannot read table statistics", error), { skipped: false, outcomes: [] })),
        Effect.withSpan("TableMaintenance.pass")
      )

    return TableMaintenance.of({ enabled: config.enabled, every: config.every, pass })
  }))

  static readonly layer = TableMaintenance.layerNoDeps.pipe(
    Layer.provide(Layer.merge(TableMaintenanceRepo.layer, MaintenanceConfig.layer))
  )
}
