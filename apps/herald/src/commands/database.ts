/**
 * The CLI's database: PostgreSQL from `DATABASE_URL`, else the embedded one —
 * through a running server's socket, or opened directly when none runs. Every
 * setting is checked first (config/Preflight.ts), so a bad one stops the
 * command before a data directory is made; then one line on stderr says which
 * database the command uses (stdout stays the command's JSON answer).
 */
import { ConfigProvider, Console, Effect, Layer, Option } from "effect"
import { AppConfig, appConfig, appVariables } from "@herald/server/config/AppConfig"
import { checkConfig } from "@herald/server/config/Preflight"
import { cliDatabaseLayer, describeTarget } from "@herald/server/db/Database"
import { isServing, recordedPublicUrl, socketPath } from "@herald/server/db/Embedded"
import { MigrationsLayer } from "@herald/server/db/Migrations"
import { loggingLayer } from "@herald/server/observability/Logging"

/** The settings checked, then one line on stderr naming the database the command uses. */
const cliConfig = Effect.gen(function*() {
  yield* checkConfig
  const config = yield* appConfig
  const serving = Option.isNone(config.databaseUrl) && (yield* isServing(socketPath(config.dataDir)))
  yield* Console.error(`herald: database: ${describeTarget(config).description}${serving ? " (through the running server)" : ""}`)
  return config
})

/**
 * Runs an admin command so that the links it builds reach the server: on the embedded database, when
 * this shell sets no `HERALD_PUBLIC_URL`, the URL the data directory's server recorded at its last start
 * (db/Embedded.ts) stands in for it, so a server started with another `PORT` still gets links that reach
 * it. A fallback of the environment's provider, so every capability's own `AppConfig` sees it.
 */
export const withServerUrl = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    yield* checkConfig
    const config = yield* appConfig
    const ownUrl = yield* appVariables.publicUrl.config
    const recorded = Option.isNone(config.databaseUrl) && Option.isNone(ownUrl) ? yield* recordedPublicUrl(config.dataDir) : undefined
    if (recorded === undefined) return yield* effect
    return yield* effect.pipe(Effect.provide(ConfigProvider.layerAdd(ConfigProvider.fromUnknown({ HERALD_PUBLIC_URL: recorded }))))
  })

const CliAppConfig = Layer.effect(AppConfig, cliConfig)

/** The database alone, for `herald migrate` (which applies the migrations itself and reports them). */
export const cliDatabaseLayerRaw = Layer.unwrap(Effect.map(AppConfig, (config) =>
  // A command's stdout is its JSON answer; the default Info chatter stays quiet.
  cliDatabaseLayer.pipe(Layer.provide(loggingLayer({ ...config, logLevel: config.logLevel === "Info" ? "Warn" : config.logLevel })))
)).pipe(Layer.provideMerge(CliAppConfig))

/** The database with migrations applied, so every command works on a fresh directory. */
export const CliDatabase = MigrationsLayer.pipe(Layer.provideMerge(cliDatabaseLayerRaw))
