/**
 * An operator's first hour (issue 35): the traps a first start used to set, each
 * tried on a real `herald` process. The embedded database is found from any
 * folder; sign-in links follow the running server's URL; a bad setting stops a
 * command before anything is opened, naming the variable, the value and the
 * rule; a refused PostgreSQL connection names where and why; a shutdown is
 * logged at both ends.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFile } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { embeddedDataCopy, tempDir } from "../support/database.ts"
import { cli, cliJson, freePort, heraldArgs, startServer } from "../support/process.ts"

const root = path.resolve(import.meta.dirname, "../..")

/** `herald <args…>` run from `cwd`, with no HERALD_DATA_DIR or DATABASE_URL: the defaults alone. */
const cliIn = (cwd: string, args: ReadonlyArray<string>) =>
  Effect.promise(() =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      const env = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", LOG_LEVEL: "Warn" }
      execFile(process.execPath, heraldArgs(args), { env, cwd, timeout: 120_000 }, (error, stdout, stderr) =>
        resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, stdout, stderr }))
    }))

describe("an operator's first start", () => {
  it.live("the embedded database is the checkout's .herald from the root and from a subfolder alike", () =>
    Effect.gen(function*() {
      const subfolder = path.join(root, "apps/herald/src")
      const fromRoot = yield* cliIn(root, ["migrate"])
      const fromSubfolder = yield* cliIn(subfolder, ["migrate"])
      const line = (stderr: string) => stderr.split("\n").find((l) => l.startsWith("herald: database:"))
      for (const run of [fromRoot, fromSubfolder]) {
        assert.strictEqual(run.code, 0, run.stderr)
        assert.match(line(run.stderr) ?? "", new RegExp(`^herald: database: embedded PGlite in ${path.join(root, ".herald")}( \\(through the running server\\))?$`))
        assert.notMatch(run.stdout, /herald: database/, "the line is on stderr; stdout stays the JSON answer")
      }
      // An admin command from the subfolder reads that same database (and says so): the person is not there, nothing is made.
      const admin = yield* cliIn(subfolder, ["admin", "session", "create", "--user", "nobody@operator-test.invalid"])
      assert.strictEqual(admin.code, 1)
      assert.strictEqual(line(admin.stderr)?.replace(/ \(through the running server\)$/, ""), `herald: database: embedded PGlite in ${path.join(root, ".herald")}`)
      assert.isFalse(fs.existsSync(path.join(subfolder, ".herald")), "no second database beside the working directory")
    }), { timeout: 240_000 })

  it.live("sign-in links use the URL of the server on the data directory, even from a shell without its PORT", () =>
    Effect.scoped(Effect.gen(function*() {
      const dataDir = yield* embeddedDataCopy("operator-url")
      const server = yield* startServer({ HERALD_DATA_DIR: dataDir })
      const port = new URL(server.baseUrl).port
      assert.notStrictEqual(port, "8080")
      // The admin shell has neither PORT nor HERALD_PUBLIC_URL.
      const person = yield* cliJson<{ id: string }>(["admin", "user", "create", "--email", "op@example.test", "--name", "Op"], { HERALD_DATA_DIR: dataDir })
      const link = yield* cliJson<{ url: string }>(["admin", "session", "link", "--user", person.id], { HERALD_DATA_DIR: dataDir })
      assert.strictEqual(new URL(link.url).origin, `http://localhost:${port}`)
      const followed = yield* Effect.promise(() => fetch(link.url.replace("localhost", "127.0.0.1"), { redirect: "manual" }))
      assert.notStrictEqual(followed.status, 404, "the link reaches the running server")
      // A URL the admin shell states itself still wins.
      const own = yield* cliJson<{ url: string }>(["admin", "session", "link", "--user", person.id], {
        HERALD_DATA_DIR: dataDir,
        HERALD_PUBLIC_URL: "https://herald.example.test"
      })
      assert.strictEqual(new URL(own.url).origin, "https://herald.example.test")
    })), { timeout: 180_000 })

  it.live("a bad setting stops serve and admin before a data directory is made, naming variable, value and rule", () =>
    Effect.scoped(Effect.gen(function*() {
      const parent = yield* tempDir("operator-config")
      const dataDir = path.join(parent, "never-made")
      const serve = yield* cli(["serve"], { HERALD_DATA_DIR: dataDir, HERALD_RATE_LIMIT_PER_MINUTE: "-5", HERALD_DB_POOL_SIZE: "0" })
      assert.strictEqual(serve.code, 1)
      assert.include(serve.stderr, `HERALD_DB_POOL_SIZE must be an integer of at least 4, not "0"`)
      assert.include(serve.stderr, `HERALD_RATE_LIMIT_PER_MINUTE must be an integer of at least 0, not "-5"`)
      assert.notInclude(serve.stderr, "SchemaError")
      const admin = yield* cli(["admin", "user", "create", "--email", "x@example.test", "--name", "X"], {
        HERALD_DATA_DIR: dataDir,
        PORT: "80a",
        HERALD_PUSH_CONCURRENCY: "0",
        HERALD_ONCALL_TIME_SCALE: "-1"
      })
      assert.strictEqual(admin.code, 1)
      assert.include(admin.stderr, `PORT must be a port from 1 to 65535, not "80a"`)
      assert.include(admin.stderr, `HERALD_PUSH_CONCURRENCY must be an integer of at least 1, not "0"`)
      assert.include(admin.stderr, `HERALD_ONCALL_TIME_SCALE must be a number above 0, not "-1"`)
      const migrate = yield* cli(["migrate"], { HERALD_DATA_DIR: dataDir, HERALD_PUSH_PAUSED: "maybe" })
      assert.strictEqual(migrate.code, 1)
      assert.include(migrate.stderr, `HERALD_PUSH_PAUSED must be true or false (also 1/0, yes/no, on/off), not "maybe"`)
      assert.isFalse(fs.existsSync(dataDir), "nothing was opened")
    })), { timeout: 120_000 })

  it.live("a refused PostgreSQL connection names host, port, database and cause, never the password", () =>
    Effect.gen(function*() {
      const closed = yield* freePort
      const url = `postgres://herald:s3cret-pw@127.0.0.1:${closed}/heraldprod`
      for (const args of [["migrate"], ["admin", "session", "create", "--user", "nobody@example.test"], ["serve"]]) {
        const run = yield* cli(args, { DATABASE_URL: url })
        assert.strictEqual(run.code, 1, args.join(" "))
        assert.include(run.stderr, `cannot connect to PostgreSQL at 127.0.0.1:${closed}/heraldprod`, args.join(" "))
        assert.include(run.stderr, "ECONNREFUSED", args.join(" "))
        assert.notInclude(run.stderr, "s3cret-pw", args.join(" "))
      }
    }), { timeout: 120_000 })

  it.live("SIGTERM: the server logs that it is stopping and, once everything is released, that it stopped", () =>
    Effect.scoped(Effect.gen(function*() {
      const dataDir = yield* embeddedDataCopy("operator-stop")
      const server = yield* startServer({ HERALD_DATA_DIR: dataDir })
      assert.include(server.output(), `database: embedded PGlite in ${dataDir}`)
      const exited = new Promise<number | null>((resolve) => server.child.once("exit", (code) => resolve(code)))
      server.child.kill("SIGTERM")
      assert.strictEqual(yield* Effect.promise(() => exited), 0)
      const log = server.output()
      const stopping = log.indexOf("herald stopping (SIGTERM)")
      const stopped = log.indexOf("herald stopped")
      assert.isAbove(stopping, -1, log)
      assert.isAbove(stopped, stopping, log)
    })), { timeout: 120_000 })
})
