/**
 * The CLI's database: PostgreSQL from `DATABASE_URL`, else the embedded one —
 * through a running server's socket, or opened directly when none runs.
 * Migrations are applied first, so every command works on a fresh directory.
 */
import { Effect, Layer } from "effect"
import { AppConfig } from "@herald/server/config/AppConfig"
import { cliDatabaseLayer } from "@herald/server/db/Database"
import { MigrationsLayer } from "@herald/server/db/Migrations"
import { loggingLayer } from "@herald/server/observability/Logging"

export const CliDatabase = Layer.unwrap(Effect.map(AppConfig, (config) =>
  MigrationsLayer.pipe(
    Layer.provideMerge(cliDatabaseLayer),
    Layer.provide(loggingLayer({ ...config, logLevel: config.logLevel === "Info" ? "Warn" : config.logLevel }))
  ))).pipe(Layer.provideMerge(AppConfig.layer))

/** The database alone, for `herald migrate` (which applies the migrations itself and reports them). */
export const cliDatabaseLayerRaw = Layer.unwrap(Effect.map(AppConfig, (config) =>
  cliDatabaseLayer.pipe(Layer.provide(loggingLayer({ ...config, logLevel: config.logLevel === "Info" ? "Warn" : config.logLevel }))))
).pipe(Layer.provideMerge(AppConfig.layer))
