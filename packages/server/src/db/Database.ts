/**
 * The SQL client: PostgreSQL when `DATABASE_URL` is set, otherwise the embedded
 * PGlite served on its socket. Both go through `@effect/sql-pg`, so every query
 * runs the same code in production, in tests and on a laptop.
 */
import { PgClient } from "@effect/sql-pg"
import { Data, Effect, Layer, Metric, Option, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import type { SqlError } from "effect/sql"
import { AppConfig } from "../config/AppConfig.ts"
import { isServing, recordPublicUrl, serveEmbedded, socketPath } from "./Embedded.ts"
import { makeTypes } from "./Timestamps.ts"

/** Which database the process uses, for the start-up log line and /readyz. */
export interface DatabaseTarget {
  readonly kind: "postgres" | "embedded"
  readonly description: string
}

/**
 * A name transform remembered per name: the driver calls it for every column
 * of every row, and the set of names is the schema's, small and fixed.
 */
const memoized = (f: (s: string) => string) => {
  const seen = new Map<string, string>()
  return (s: string) => {
    let out = seen.get(s)
    if (out === undefined) {
      out = f(s)
      if (seen.size < 10_000) seen.set(s, out)
    }
    return out
  }
}

const clientOptions = {
  // snake_case columns become camelCase fields in results, and back in queries.
  transformResultNames: memoized((s) => s.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase())),
  transformQueryNames: memoized((s) => s.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`)),
  applicationName: "herald",
  types: makeTypes()
} as const

/** PostgreSQL could not be reached or refused us: where (never the password) and why. */
export class DatabaseUnreachable extends Data.TaggedError("DatabaseUnreachable")<{
  readonly message: string
  readonly cause: unknown
}> {}

/** `host:port/database` of a URL, for messages: the user and password stay out. */
export const describeUrl = (url: Redacted.Redacted<string>): string => {
  const u = URL.parse(Redacted.value(url))
  return u === null ? "(DATABASE_URL is not a URL)" : `${u.hostname}:${u.port || "5432"}${u.pathname === "" ? "/" : u.pathname}`
}

/** The driver's reason in a few words: the socket's code (`ECONNREFUSED`), else the server's or the driver's message. */
const reasonOf = (error: SqlError.SqlError): string => {
  const reason = error.reason as { readonly message?: string; readonly cause?: unknown }
  const cause = reason.cause as { readonly code?: unknown; readonly message?: unknown; readonly errors?: unknown } | undefined
  if (typeof cause === "object" && cause !== null) {
    if (typeof cause.code === "string" && typeof cause.message === "string" && cause.message !== "") {
      return cause.message.includes(cause.code) ? cause.message : `${cause.code}: ${cause.message}`
    }
    // A host name with several addresses fails with an AggregateError: a code, an empty message.
    if (typeof cause.code === "string") return cause.code
    if (typeof cause.message === "string" && cause.message !== "") return cause.message
  }
  return (reason.message ?? error.message).replace(/^PgConnection: /, "")
}

/** What either database gives: the SQL client (a refusal at start is one of the two errors). */
export type DatabaseLayer = Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, DatabaseUnreachable | SqlError.SqlError>

/**
 * A pool on PostgreSQL. One `SELECT 1` at start: a wrong host, port, database or password is said
 * there, naming the database, instead of as the driver's bare "Failed to connect" somewhere later.
 */
export const postgresLayer = (url: Redacted.Redacted<string>, poolSize: number): DatabaseLayer =>
  Layer.effectContext(Effect.gen(function*() {
    const context = yield* Layer.build(PgClient.layer({ ...clientOptions, url, maxConnections: poolSize, minConnections: 0, multiplex: true }))
    yield* Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT 1`).pipe(Effect.provide(context))
    return context
  }).pipe(
    Effect.catchTag("SqlError", (error) =>
      Effect.fail(new DatabaseUnreachable({ message: `cannot connect to PostgreSQL at ${describeUrl(url)}: ${reasonOf(error)}`, cause: error })))
  ))

/** One connection to the embedded database's socket. */
export const embeddedClientLayer = (socket: string): DatabaseLayer =>
  PgClient.layer({ ...clientOptions, path: socket, database: "postgres", username: "postgres", maxConnections: 1, prepare: false })

/** The pool's configured size, for `/metrics` (the driver exposes no live pool counts). */
const poolSizeGauge = Metric.gauge("herald_db_pool_max_connections", {
  description: "Configured maximum connections of the database pool (1 for the embedded database)."
})

/**
 * The server's database: PostgreSQL, or the embedded database opened and
 * served by this process.
 */
export const serverDatabaseLayer = Layer.unwrap(Effect.gen(function*() {
  const config = yield* AppConfig
  if (Option.isSome(config.databaseUrl)) {
    yield* Metric.update(poolSizeGauge, config.poolSize)
    return postgresLayer(config.databaseUrl.value, config.poolSize)
  }
  // A fresh data directory starts as a copy of the migrated template (EmbeddedTemplate.ts), loaded only here.
  const { serveEmbeddedSeeded } = yield* Effect.promise(() => import("./EmbeddedTemplate.ts"))
  const socket = yield* serveEmbeddedSeeded(config.dataDir)
  yield* recordPublicUrl(config.dataDir, config.publicUrl)
  yield* Metric.update(poolSizeGauge, 1)
  return embeddedClientLayer(socket)
}))

/**
 * The CLI's database: PostgreSQL; or a running server's embedded database
 * through its socket; or, with no server running, the data directory opened
 * by the CLI itself.
 */
export const cliDatabaseLayer = Layer.unwrap(Effect.gen(function*() {
  const config = yield* AppConfig
  if (Option.isSome(config.databaseUrl)) {
    return postgresLayer(config.databaseUrl.value, 1)
  }
  const socket = socketPath(config.dataDir)
  if (yield* isServing(socket)) return embeddedClientLayer(socket)
  return embeddedClientLayer(yield* serveEmbedded(config.dataDir))
}))

export const describeTarget = (config: { readonly databaseUrl: Option.Option<Redacted.Redacted<string>>; readonly dataDir: string }): DatabaseTarget =>
  Option.match(config.databaseUrl, {
    onNone: () => ({ kind: "embedded", description: `embedded PGlite in ${config.dataDir}` }),
    onSome: (url) => ({ kind: "postgres", description: `PostgreSQL ${describeUrl(url)}` })
  })
