/**
 * Table maintenance (db/TableMaintenance.ts): how often Herald looks at its
 * queue tables' dead rows and vacuums the ones past the threshold. Herald does
 * this itself because the embedded database (PGlite) runs no autovacuum, and
 * many small PostgreSQL installs turn it off; where autovacuum keeps up, a pass
 * finds nothing to do and costs one catalog read.
 */
import { Config, Context, Duration, Layer } from "effect"
import * as Env from "./Variable.ts"

export interface MaintenanceConfigShape {
  /** Off when the variable is `0`: no worker is started. */
  readonly enabled: boolean
  /** Time between the end of one pass and the start of the next. */
  readonly every: Duration.Duration
  /** Dead rows a table may hold before a pass vacuums it: `base + scale × live rows`. */
  readonly vacuumBase: number
  readonly vacuumScale: number
  /** Rows changed since the last ANALYZE before a pass refreshes the table's statistics: `base + scale × live rows`. */
  readonly analyzeBase: number
  readonly analyzeScale: number
  /** The same for a history table (only ever analyzed): its share of changed rows before a new ANALYZE. */
  readonly historyAnalyzeScale: number
}

export const maintenanceVariables = {
  intervalSeconds: Env.integer("HERALD_TABLE_MAINTENANCE_INTERVAL_SECONDS", {
    // 5 s: the queue's heap holds what is deleted between two vacuums, and its claims read that much more
    // (docs/benchmarks.md, "The first minute"); a pass with nothing past a threshold is one read of statistics.
    default: 5,
    min: 0,
    zero: "turns it off",
    description: "Seconds between passes of the table-maintenance worker, which vacuums and analyzes Herald's queue tables " +
      "when their dead rows pass 1,000 + 10 % of their live rows (autovacuum or not; the embedded database has none); " +
      "`0` turns it off (then keep autovacuum on, see [operations](operations.md#table-maintenance))."
  })
}

export const makeMaintenanceConfig = (intervalSeconds: number): MaintenanceConfigShape => ({
  enabled: intervalSeconds > 0,
  every: Duration.seconds(Math.max(1, intervalSeconds)),
  // Autovacuum's defaults are 50 + 20 % of the table: for a queue whose every row is updated a few
  // times and then left as history, a fifth of the table dead is already most of what a claim reads.
  vacuumBase: 1_000,
  vacuumScale: 0.1,
  // Autovacuum analyzes at 50 + 10 %; a little higher here because ANALYZE invalidates every cached
  // plan of the table, and a queue's rows change all the time.
  analyzeBase: 1_000,
  analyzeScale: 0.1,
  // A history only grows and is read by key: its statistics change little once it is large, while each
  // ANALYZE samples 30,000 random pages of it (about a second at 1–3M receipts) and holds a snapshot
  // meanwhile, so the queue's deleted rows cannot be pruned. Once per half its size again is enough.
  historyAnalyzeScale: 0.5
})

export const maintenanceConfig: Config.Config<MaintenanceConfigShape> = Env.configOf(maintenanceVariables).pipe(
  Config.map((c) => makeMaintenanceConfig(c.intervalSeconds))
)

export class MaintenanceConfig extends Context.Service<MaintenanceConfig, MaintenanceConfigShape>()("herald/MaintenanceConfig") {
  static readonly layer = Layer.effect(MaintenanceConfig, maintenanceConfig)
}
