/**
 * The server's configuration, read once through `Config` from the environment.
 * No other module reads `process.env`.
 */
import { Config, Context, Layer, Option, Redacted } from "effect"
import type { LogLevel } from "effect"

export interface AppConfigShape {
  readonly port: number
  readonly host: string
  /** Base of every URL Herald hands out (webhook URLs, docs links). */
  readonly publicUrl: string
  /** Unset: embedded PGlite under `dataDir`. */
  readonly databaseUrl: Option.Option<Redacted.Redacted<string>>
  readonly dataDir: string
  /** Pool size against PostgreSQL; the embedded database always uses one connection. */
  readonly poolSize: number
  readonly logLevel: LogLevel.LogLevel
  readonly logFormat: "text" | "json"
}

export const appConfig: Config.Config<AppConfigShape> = Config.all({
  port: Config.Port("PORT").pipe(Config.withDefault(8080)),
  host: Config.String("HOST").pipe(Config.withDefault("127.0.0.1")),
  publicUrl: Config.option(Config.String("HERALD_PUBLIC_URL")),
  databaseUrl: Config.option(Config.Redacted("DATABASE_URL")),
  dataDir: Config.String("HERALD_DATA_DIR").pipe(Config.withDefault("./.herald")),
  poolSize: Config.Int("HERALD_DB_POOL_SIZE").pipe(Config.withDefault(10)),
  logLevel: Config.LogLevel("LOG_LEVEL").pipe(Config.withDefault("Info" as LogLevel.LogLevel)),
  logFormat: Config.Literals(["text", "json"], "LOG_FORMAT").pipe(Config.withDefault("text" as const))
}).pipe(
  Config.map((c) => ({
    ...c,
    publicUrl: Option.getOrElse(c.publicUrl, () => `http://localhost:${c.port}`).replace(/\/+$/, ""),
    // An empty DATABASE_URL means "unset" (a common shell idiom).
    databaseUrl: Option.filter(c.databaseUrl, (u) => Redacted.value(u).trim() !== "")
  }))
)

export class AppConfig extends Context.Service<AppConfig, AppConfigShape>()("herald/AppConfig") {
  static readonly layer = Layer.effect(AppConfig, appConfig)
}

/** Every environment variable the server reads, for the README and `herald --help`. */
export const environmentVariables: ReadonlyArray<{ readonly name: string; readonly default: string; readonly description: string }> = [
  { name: "PORT", default: "8080", description: "HTTP port." },
  { name: "HOST", default: "127.0.0.1", description: "Interface to listen on (`0.0.0.0` for all)." },
  { name: "HERALD_PUBLIC_URL", default: "http://localhost:$PORT", description: "Public base URL, used to build webhook URLs." },
  { name: "DATABASE_URL", default: "(unset)", description: "PostgreSQL URL. Unset: embedded PGlite under `HERALD_DATA_DIR`." },
  { name: "HERALD_DATA_DIR", default: "./.herald", description: "Directory of the embedded database." },
  { name: "HERALD_DB_POOL_SIZE", default: "10", description: "PostgreSQL connection pool size (the embedded database always uses 1)." },
  { name: "LOG_LEVEL", default: "Info", description: "Trace, Debug, Info, Warn, Error, Fatal or None." },
  { name: "LOG_FORMAT", default: "text", description: "`text` or `json` (one JSON object per line)." }
]
