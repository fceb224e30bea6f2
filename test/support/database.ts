/**
 * A fresh database per test file: a new database on the PostgreSQL server of
 * `TEST_DATABASE_URL` (dropped afterwards), or, where no server is configured,
 * an embedded PGlite in a temporary directory — served on its socket, so the
 * code under test runs the same `@effect/sql-pg` path either way.
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
import { Reactivity } from "effect/reactivity"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { embeddedClientLayer, postgresLayer } from "../../packages/server/src/db/Database.ts"
import { serveEmbedded } from "../../packages/server/src/db/Embedded.ts"

export interface TestDatabase {
  /** For a child process: `DATABASE_URL`, or `HERALD_DATA_DIR` of an embedded database it should open itself. */
  readonly env: Record<string, string>
  readonly kind: "postgres" | "embedded"
}

const adminUrl = process.env.TEST_DATABASE_URL

const withDatabase = (url: string, name: string) => {
  const u = new URL(url)
  u.pathname = `/${name}`
  return u.toString()
}

/** Creates a database on the test server; dropped when the scope closes. */
export const freshPostgres = Effect.gen(function*() {
  const name = `herald_t_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`
  const admin = PgClient.make({ url: Redacted.make(adminUrl!), maxConnections: 1 })
  const run = (statement: string) =>
    Effect.scoped(Effect.flatMap(admin, (sql) => sql.unsafe(statement))).pipe(Effect.provide(Reactivity.layer))
  yield* Effect.acquireRelease(
    run(`CREATE DATABASE "${name}"`),
    () => run(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).pipe(Effect.ignore)
  ).pipe(Effect.orDie)
  return withDatabase(adminUrl!, name)
})

/** A temporary data directory, removed when the scope closes. */
export const tempDir = (label: string) =>
  Effect.acquireRelease(
    Effect.sync(() => fs.mkdtempSync(path.join(os.tmpdir(), `herald-${label}-`))),
    (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
  )

/** The SqlClient of a fresh database for in-process tests. */
export const TestSqlLayer = Layer.unwrap(Effect.gen(function*() {
  if (adminUrl !== undefined && adminUrl !== "") {
    const url = yield* freshPostgres
    return postgresLayer(Redacted.make(url), 4)
  }
  const dir = yield* tempDir("db")
  const socket = yield* serveEmbedded(dir).pipe(Effect.orDie)
  return embeddedClientLayer(socket)
}))

/** Settings a child `herald` process needs to reach a fresh database of its own. */
export const childDatabase = Effect.gen(function*() {
  if (adminUrl !== undefined && adminUrl !== "") {
    return { kind: "postgres", env: { DATABASE_URL: yield* freshPostgres } } satisfies TestDatabase
  }
  return { kind: "embedded", env: { HERALD_DATA_DIR: yield* tempDir("data") } } satisfies TestDatabase
})

export const usingPostgres = adminUrl !== undefined && adminUrl !== ""
