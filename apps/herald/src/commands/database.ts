/**
 * The CLI's database: PostgreSQL from `DATABASE_URL`, else the embedded one —
 * through a running server's socket, or opened directly when none runs.
 */
import { Effect, Layer } from "effect"
import { AppConfig } from "@herald/server/config/AppConfig"
import { cliDatabaseLayer } from "@herald/server/db/Database"
import { MigrationsLayer } from "@herald/server/db/Migrations"
import { loggingLayer } from "@herald/server/observability/Logging"

/** The database alone, for `herald migrate` (which applies the migrations itself and reports them). */
export const cliDatabaseLayerRaw = Layer.unwrap(Effect.map(AppConfig, (config) =>
  // A command's stdout is its JSON answer; the default Info chatter stays quiet.
  cliDatabaseLayer.pipe(Layer.provide(loggingLayer({ ...config, logLevel: config.logLevel === "Info" ? "Warn" : config.logLevel })))
)).pipe(Layer.provideMerge(AppConfig.layer))

/** The database with migrations applied, so every command works on a fresh directory. */
export const CliDatabase = MigrationsLayer.pipe(Layer.provideMerge(cliDatabaseLayerRaw))
