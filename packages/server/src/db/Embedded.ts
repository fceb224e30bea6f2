/**
 * The embedded database: PGlite in a data directory, served on a Unix socket
 * inside that directory so that `@effect/sql-pg` reaches it exactly as it
 * reaches PostgreSQL, and so that the CLI can reach a running server's
 * database. PGlite is one backend session: every client of the socket shares
 * it, which is why the embedded pool has one connection.
 */
import type { PGlite } from "@electric-sql/pglite"
import type { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { Data, Effect } from "effect"
import type { Scope } from "effect"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"

export class EmbeddedDatabaseError extends Data.TaggedError("EmbeddedDatabaseError")<{
  /** Where it failed: `open` is PGlite refusing the data directory's files. */
  readonly stage: "busy" | "prepare" | "load" | "open" | "serve"
  readonly message: string
  readonly cause?: unknown
}> {}

/**
 * PostgreSQL's buffer pool inside PGlite. initdb's 128MB is zeroed in WebAssembly memory at every
 * open (0.4 s of each start, measured) and held for the process's life; the embedded database is
 * small and its files sit in the OS page cache anyway.
 */
const SHARED_BUFFERS = "16MB"

/** Where the embedded server listens for a data directory. */
export const socketPath = (dataDir: string) => path.join(path.resolve(dataDir), ".s.PGSQL.5432")

/** True when a live process answers on the data directory's socket. */
export const isServing = (socket: string): Effect.Effect<boolean> =>
  Effect.callback<boolean>((resume) => {
    const conn = net.connect({ path: socket })
    conn.once("connect", () => {
      conn.destroy()
      resume(Effect.succeed(true))
    })
    conn.once("error", () => resume(Effect.succeed(false)))
    return Effect.sync(() => conn.destroy())
  })

/**
 * Opens the data directory and serves it on its socket for the lifetime of the
 * scope. Fails when another process already serves it: two PGlite instances on
 * one directory would corrupt it.
 */
export const serveEmbedded = (dataDir: string): Effect.Effect<string, EmbeddedDatabaseError, Scope.Scope> =>
  Effect.gen(function*() {
    const dir = path.resolve(dataDir)
    const socket = socketPath(dir)
    if (yield* isServing(socket)) {
      return yield* new EmbeddedDatabaseError({
        stage: "busy",
        message: `another Herald process is serving the embedded database in ${dir}`
      })
    }
    yield* Effect.try({
      try: () => {
        fs.mkdirSync(dir, { recursive: true })
        // A socket file left by a crashed process: nothing answers on it.
        fs.rmSync(socket, { force: true })
      },
      catch: (cause) => new EmbeddedDatabaseError({ stage: "prepare", message: `cannot prepare ${dir}`, cause })
    })
    // Loaded here, not at the top: on PostgreSQL, and in a CLI reaching a running server, PGlite is never needed.
    const [pglite, pgliteSocket] = yield* Effect.tryPromise({
      try: () => Promise.all([import("@electric-sql/pglite"), import("@electric-sql/pglite-socket")]),
      catch: (cause) => new EmbeddedDatabaseError({ stage: "load", message: "cannot load the embedded database (PGlite)", cause })
    })
    const db = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: (): Promise<PGlite> =>
          pglite.PGlite.create(path.join(dir, "pgdata"), {
            startParams: [...pglite.PGlite.defaultStartParams, "-c", `shared_buffers=${SHARED_BUFFERS}`]
          }),
        catch: (cause) => new EmbeddedDatabaseError({ stage: "open", message: `cannot open the embedded database in ${dir}`, cause })
      }),
      (db) => Effect.promise(() => db.close()).pipe(Effect.ignore)
    )
    yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          // The server's own connection, the CLI's, and probes. The socket server
          // runs one query at a time and keeps a transaction's queries together.
          const server: PGLiteSocketServer = new pgliteSocket.PGLiteSocketServer({ db, path: socket, maxConnections: 64 })
          await server.start()
          return server
        },
        catch: (cause) => new EmbeddedDatabaseError({ stage: "serve", message: `cannot serve the embedded database on ${socket}`, cause })
      }),
      (server) => Effect.promise(() => server.stop()).pipe(Effect.ignore)
    )
    return socket
  })

/**
 * The public URL the last `herald serve` on a data directory used, kept beside its database so that
 * `herald admin session link` builds links on the server's URL even when the shell it runs in lacks
 * the server's `PORT` or `HERALD_PUBLIC_URL`.
 */
const publicUrlFile = (dataDir: string) => path.join(path.resolve(dataDir), "public-url")

export const recordPublicUrl = (dataDir: string, url: string): Effect.Effect<void> =>
  Effect.sync(() => fs.writeFileSync(publicUrlFile(dataDir), `${url}\n`)).pipe(
    // A read-only directory costs only the convenience, never the start.
    Effect.catchDefect(() => Effect.void)
  )

export const recordedPublicUrl = (dataDir: string): Effect.Effect<string | undefined> =>
  Effect.sync(() => {
    try {
      const url = fs.readFileSync(publicUrlFile(dataDir), "utf8").trim()
      return URL.canParse(url) ? url : undefined
    } catch {
      return undefined
    }
  })
