/**
 * A fresh database per test file: a new database on the PostgreSQL server of
 * `TEST_DATABASE_URL` (dropped afterwards), or, where no server is configured,
 * an embedded PGlite served on its socket, so the code under test runs the
 * same `@effect/sql-pg` path either way. Each starts as the run's migrated
 * template (globalSetup.ts), already at the latest schema: a copy of it, or an
 * embedded one an earlier file of the worker emptied back to it (embeddedPool.ts);
 * `EmptySqlLayer` is a database with nothing in it, for the migrations' own tests.
 */
import { Effect, Layer, Redacted, Schedule } from "effect"
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import { embeddedClientLayer, postgresLayer } from "../../packages/server/src/db/Database.ts"
import { serveEmbedded } from "../../packages/server/src/db/Embedded.ts"
import { inject } from "vitest"
import type { DatabaseTemplate } from "./globalSetup.ts"
import { pooledEmbedded } from "./embeddedPool.ts"
import { adminStatement, withDatabase } from "./postgresAdmin.ts"
import { makeScratchDir } from "./scratchDir.ts"

export interface TestDatabase {
  /** For a child process: `DATABASE_URL`, or `HERALD_DATA_DIR` of an embedded database it should open itself. */
  readonly env: Record<string, string>
  readonly kind: "postgres" | "embedded"
}

const adminUrl = process.env.TEST_DATABASE_URL

/** The run's migrated template, when globalSetup made one (it does for every `vitest run` of this config). */
const template: DatabaseTemplate | undefined = inject("heraldTemplate")

/** An error's message with those of its causes (the driver's own is the cause of the SqlError). */
const messages = (e: unknown): string => e instanceof Error ? `${e.message} ${messages(e.cause)}` : ""

/**
 * Creates a database on the test server, a copy of the run's template unless `empty`; dropped when
 * the scope closes. Two copies of one template at once can collide on its lock: the loser retries.
 */
const postgresDatabase = (empty: boolean) =>
  Effect.gen(function*() {
    const name = `herald_t_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`
    const from = !empty && template?.kind === "postgres" ? ` TEMPLATE "${template.name}"` : ""
    const create = adminStatement(adminUrl!, `CREATE DATABASE "${name}"${from}`).pipe(
      Effect.retry({ times: 20, schedule: Schedule.spaced("100 millis"), while: (e) => messages(e).includes("being accessed by other users") })
    )
    yield* Effect.acquireRelease(
      create,
      () => adminStatement(adminUrl!, `DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`).pipe(Effect.ignore)
    ).pipe(Effect.orDie)
    return withDatabase(adminUrl!, name)
  })

/** Creates a database on the test server, at the latest schema; dropped when the scope closes. */
export const freshPostgres = postgresDatabase(false)

/** Creates an empty database on the test server (no schema: a restore's target); dropped when the scope closes. */
export const emptyPostgres = postgresDatabase(true)

/** A temporary data directory, removed when the scope closes. */
export const tempDir = (label: string) =>
  Effect.acquireRelease(
    Effect.sync(() => makeScratchDir(label)),
    (dir) => Effect.sync(() => fs.rmSync(dir, { recursive: true, force: true }))
  )

/** A temporary embedded data directory holding a copy of the template's database (none when `empty`). */
const embeddedDataDir = (label: string, empty: boolean) =>
  Effect.tap(tempDir(label), (dir) =>
    Effect.sync(() => {
      if (empty || template?.kind !== "embedded") return
      // The database files alone: not a socket a server of the template left behind.
      fs.cpSync(path.join(template.dataDir, "pgdata"), path.join(dir, "pgdata"), { recursive: true })
    }))

const sqlLayer = (empty: boolean) =>
  Layer.unwrap(Effect.gen(function*() {
    if (adminUrl !== undefined && adminUrl !== "") {
      const url = yield* postgresDatabase(empty)
      // Three connections are held by the listeners (prompt wake-ups, inbox signals, quiet hours): room for more.
      return postgresLayer(Redacted.make(url), 6)
    }
    // At the latest schema: one this worker kept from an earlier file, emptied (embeddedPool.ts).
    if (!empty && template?.kind === "embedded") return embeddedClientLayer(yield* pooledEmbedded(template.dataDir))
    const dir = yield* embeddedDataDir("db", empty)
    const socket = yield* serveEmbedded(dir).pipe(Effect.orDie)
    return embeddedClientLayer(socket)
  }))

/** The SqlClient of a fresh database at the latest schema for in-process tests. */
export const TestSqlLayer = sqlLayer(false)

/** The SqlClient of a fresh database with no schema at all: for the tests of migrating from empty. */
export const EmptySqlLayer = sqlLayer(true)

/**
 * An embedded data directory at the latest schema for a child process, even where PostgreSQL is
 * configured (then with nothing in it: the template is a PostgreSQL one).
 */
export const embeddedDataCopy = (label: string) => embeddedDataDir(label, false)

/** Settings a child `herald` process needs to reach a fresh database of its own, at the latest schema. */
export const childDatabase = Effect.gen(function*() {
  if (adminUrl !== undefined && adminUrl !== "") {
    return { kind: "postgres", env: { DATABASE_URL: yield* freshPostgres } } satisfies TestDatabase
  }
  return { kind: "embedded", env: { HERALD_DATA_DIR: yield* embeddedDataDir("data", false) } } satisfies TestDatabase
})

export const usingPostgres = adminUrl !== undefined && adminUrl !== ""
