/**
 * A fresh embedded data directory starts as a copy of a template. PGlite's
 * initdb costs seconds of CPU (about 7 s on a small machine) and the migrations
 * on PGlite a second or two more, the same work for every new directory. So
 * `herald serve` on a fresh directory first makes sure a template exists — an
 * initialized, migrated data directory, closed cleanly, that no server has ever
 * run on (no accounts, no server secrets: those are made at run time) — built
 * once per PGlite version and set of migration files under
 * `node_modules/.cache/herald/`, then copies it. The migrations still run at
 * start and find nothing left to do. Whatever goes wrong on the way (no cache
 * directory, not writable, a failed build or copy, a copy PGlite cannot open)
 * falls back to PGlite's own initdb on the directory, as before.
 */
import { Effect } from "effect"
import type { Scope } from "effect"
import { createHash, randomBytes } from "node:crypto"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { embeddedClientLayer } from "./Database.ts"
import { EmbeddedDatabaseError, serveEmbedded } from "./Embedded.ts"
import { runMigrations } from "./Migrations.ts"

/** Bumped when what a template holds, or how it is built, changes. */
const FORMAT = "1"
const migrationsDir = fileURLToPath(new URL("../../../../migrations/", import.meta.url))

/** Where this installation's template lives, for the PGlite it has and the migration files beside it. */
const templateLocation = () => {
  // Node's resolver (not `import.meta.resolve`, which a test runner's module loader may lack).
  const pglite = createRequire(import.meta.url).resolve("@electric-sql/pglite")
  const marker = `${path.sep}node_modules${path.sep}`
  const at = pglite.lastIndexOf(marker)
  if (at < 0) throw new Error(`PGlite is not under a node_modules directory (${pglite})`)
  const nodeModules = pglite.slice(0, at + marker.length - 1)
  const { version } = JSON.parse(fs.readFileSync(path.join(nodeModules, "@electric-sql/pglite/package.json"), "utf8")) as {
    readonly version: string
  }
  const hash = createHash("sha256").update(`herald pglite template ${FORMAT}\0${version}\0`)
  // Every file of the migrations folder, content included: an edited migration makes a new template.
  for (const name of fs.readdirSync(migrationsDir).sort()) {
    hash.update(`${name}\0`).update(fs.readFileSync(path.join(migrationsDir, name))).update("\0")
  }
  const cache = path.join(nodeModules, ".cache", "herald")
  return { cache, dir: path.join(cache, `pglite-${version}-${hash.digest("hex").slice(0, 16)}`) }
}

type Location = ReturnType<typeof templateLocation>

const isTemplate = (dir: string) => fs.existsSync(path.join(dir, "PG_VERSION"))

/** A new directory's data: none yet, or an empty folder (PGlite would run initdb on either). */
const isFresh = (pgdata: string) => {
  try {
    return fs.readdirSync(pgdata).length === 0
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return true
    throw error
  }
}

/** Renames `from` to `to` unless `to` already holds something (another process got there first). */
const publish = (from: string, to: string) => {
  try {
    fs.renameSync(from, to)
    return true
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code
    if (code === "ENOTEMPTY" || code === "EEXIST") return false
    throw error
  }
}

const removeQuietly = (dir: string) => fs.rmSync(dir, { recursive: true, force: true })

/**
 * Builds the template: initdb and the migrations in a scratch data directory,
 * PGlite closed with the scope (so the files are whole), then moved into place.
 * The scratch directory holds the socket, so it goes where its path stays short.
 */
const buildTemplate = (location: Location) =>
  Effect.gen(function*() {
    fs.mkdirSync(location.cache, { recursive: true })
    const inCache = path.join(location.cache, "build-XXXXXX", ".s.PGSQL.5432").length < 100
    const scratch = fs.mkdtempSync(inCache ? path.join(location.cache, "build-") : path.join(os.tmpdir(), "herald-template-"))
    yield* Effect.gen(function*() {
      yield* Effect.logInfo(`preparing the embedded database template (once per PGlite version and migrations) in ${location.dir}`)
      yield* serveEmbedded(scratch).pipe(
        Effect.flatMap((socket) => Effect.scoped(Effect.provide(runMigrations, embeddedClientLayer(socket)))),
        Effect.scoped
      )
      const built = path.join(scratch, "pgdata")
      if (!isTemplate(built)) return yield* Effect.fail(new Error(`no data directory was made in ${built}`))
      yield* Effect.try(() => {
        if (inCache) {
          publish(built, location.dir)
        } else {
          // Another filesystem: copied beside the destination first, so the template appears whole or not at all.
          const staged = `${location.dir}.tmp-${randomBytes(4).toString("hex")}`
          fs.cpSync(built, staged, { recursive: true })
          if (!publish(staged, location.dir)) removeQuietly(staged)
        }
      })
      // Templates of other PGlite versions or migrations are not used again; a build an hour old was cut short.
      // Best effort: another process may be removing the same entries.
      for (const name of fs.readdirSync(location.cache)) {
        const other = path.join(location.cache, name)
        try {
          const stale = name.startsWith("pglite-")
            ? other !== location.dir && !name.includes(".tmp-")
            : name.startsWith("build-") && other !== scratch && fs.statSync(other).mtimeMs < Date.now() - 3_600_000
          if (stale) removeQuietly(other)
        } catch {
          // gone already
        }
      }
    }).pipe(Effect.ensuring(Effect.sync(() => removeQuietly(scratch))))
  })

/**
 * Copies the template into `dataDir` when its data directory is new, answering
 * where the template is when it did. Never fails: undefined means PGlite runs
 * its own initdb on the directory, as it would have.
 */
export const seedFromTemplate = (dataDir: string): Effect.Effect<Location | undefined> =>
  Effect.gen(function*() {
    const dir = path.resolve(dataDir)
    const pgdata = path.join(dir, "pgdata")
    if (!isFresh(pgdata)) return undefined
    const location = templateLocation()
    if (!isTemplate(location.dir)) yield* buildTemplate(location)
    const staged = path.join(dir, `.pgdata-seed-${randomBytes(4).toString("hex")}`)
    try {
      fs.mkdirSync(dir, { recursive: true })
      // A copy-on-write clone where the filesystem has them, a plain copy elsewhere.
      fs.cpSync(location.dir, staged, { recursive: true, mode: fs.constants.COPYFILE_FICLONE })
      // Renamed in one step, so a directory is never left half copied where PGlite looks.
      return publish(staged, pgdata) ? location : undefined
    } finally {
      removeQuietly(staged)
    }
  }).pipe(
    Effect.catchCause((cause) =>
      Effect.as(Effect.logWarning("could not start the embedded database from its template; running initdb instead", cause), undefined)
    ),
    Effect.withSpan("EmbeddedTemplate.seed")
  )

/**
 * Builds this installation's template now unless it exists (`npm install` runs it, so the first
 * `npm start` only copies it). Never fails: a start without a template builds it as before.
 */
export const prepareTemplate: Effect.Effect<void> = Effect.gen(function*() {
  const location = templateLocation()
  if (!isTemplate(location.dir)) yield* buildTemplate(location)
}).pipe(
  Effect.scoped,
  Effect.catchCause((cause) => Effect.logWarning("could not prepare the embedded database template; the first start will", cause))
)

const cannotOpen = (error: EmbeddedDatabaseError) => error.stage === "open"

/**
 * `serveEmbedded`, a fresh directory first seeded from the template. If PGlite
 * cannot open the copy, the copy and the template are removed and the
 * directory opened as it would have been without one (initdb).
 */
export const serveEmbeddedSeeded = (dataDir: string): Effect.Effect<string, EmbeddedDatabaseError, Scope.Scope> =>
  Effect.gen(function*() {
    const seeded = yield* seedFromTemplate(dataDir)
    if (seeded === undefined) return yield* serveEmbedded(dataDir)
    return yield* serveEmbedded(dataDir).pipe(
      Effect.catchIf(cannotOpen, (error) =>
        Effect.logWarning(`the embedded database copied from ${seeded.dir} did not open; running initdb instead`, error).pipe(
          Effect.andThen(Effect.sync(() => {
            removeQuietly(path.join(path.resolve(dataDir), "pgdata"))
            removeQuietly(seeded.dir)
          })),
          Effect.andThen(serveEmbedded(dataDir))
        ))
    )
  })
