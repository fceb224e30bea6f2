/**
 * The server's configuration, read once through `Config` from the environment.
 * No other module reads `process.env`.
 */
import { Config, Context, Layer, Option, Redacted } from "effect"
import type { LogLevel } from "effect"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as Env from "./Variable.ts"

/**
 * The embedded database's default home: `.herald` at the root of the Herald checkout, found from this
 * file's own location, so `npx herald admin …` from a subfolder opens the database `npm start` made.
 * Not the user's data directory: two checkouts keep two databases, a database made before this default
 * (in the root, where `npm start` runs) is still found, and `.gitignore` already keeps it out of commits.
 */
export const defaultDataDir = fileURLToPath(new URL("../../../../.herald", import.meta.url))

export interface AppConfigShape {
  readonly port: number
  readonly host: string
  /** Base of every URL Herald hands out (webhook URLs, docs links). */
  readonly publicUrl: string
  /** Unset: embedded PGlite under `dataDir`. */
  readonly databaseUrl: Option.Option<Redacted.Redacted<string>>
  /** Absolute: `HERALD_DATA_DIR` resolved against the working directory, else `defaultDataDir`. */
  readonly dataDir: string
  /** Pool size against PostgreSQL; the embedded database always uses one connection. */
  readonly poolSize: number
  readonly logLevel: LogLevel.LogLevel
  readonly logFormat: "text" | "json"
}

/** The server's own variables; `Reference.ts` renders them into docs/configuration.md. */
export const appVariables = {
  port: Env.port("PORT", { default: 8080, description: "Port the HTTP server listens on." }),
  host: Env.string("HOST", { default: "127.0.0.1", description: "Interface to listen on (`0.0.0.0` for all)." }),
  publicUrl: Env.optionalString("HERALD_PUBLIC_URL", {
    unset: "`http://localhost:$PORT`",
    description: "Public base URL of this server, used to build the URLs Herald hands out (inbound webhook URLs, docs links)."
  }),
  databaseUrl: Env.optionalSecret("DATABASE_URL", {
    description: "PostgreSQL URL (`postgres://user:password@host:5432/db`). Unset or empty: the embedded PGlite database under `HERALD_DATA_DIR`."
  }),
  dataDir: Env.optionalString("HERALD_DATA_DIR", {
    blankIsUnset: true,
    unset: "`.herald` at the root of the Herald checkout (wherever the command runs from)",
    description: "Directory of the embedded database; a relative path is taken from the working directory. " +
      "`herald serve` and every `herald admin …` command print the directory they use."
  }),
  poolSize: Env.integer("HERALD_DB_POOL_SIZE", {
    default: 10,
    // The three listeners hold theirs for good: a fourth is the least that leaves one for queries.
    min: 4,
    description: "PostgreSQL connection pool size (the embedded database always uses 1). Three of them are held for " +
      "good by the change listeners (prompt wake-ups, inbox streams, quiet hours), so leave room above that."
  }),
  logLevel: Env.logLevel("LOG_LEVEL", { default: "Info", description: "Least severe level logged (request logs are `Debug`)." }),
  logFormat: Env.literals("LOG_FORMAT", ["text", "json"], {
    default: "text",
    description: "`text` (logfmt) or `json` (one object per line); logs go to stderr."
  })
}

export const appConfig: Config.Config<AppConfigShape> = Env.configOf(appVariables).pipe(
  Config.map((c) => ({
    ...c,
    publicUrl: Option.getOrElse(c.publicUrl, () => `http://localhost:${c.port}`).replace(/\/+$/, ""),
    dataDir: path.resolve(Option.getOrElse(c.dataDir, () => defaultDataDir)),
    // An empty DATABASE_URL means "unset" (a common shell idiom).
    databaseUrl: Option.filter(c.databaseUrl, (u) => Redacted.value(u).trim() !== "")
  }))
)

export class AppConfig extends Context.Service<AppConfig, AppConfigShape>()("herald/AppConfig") {
  static readonly layer = Layer.effect(AppConfig, appConfig)
}

/** Every environment variable of the server itself, as declared (the reference lists them). */
export const environmentVariables = Env.list(appVariables)
