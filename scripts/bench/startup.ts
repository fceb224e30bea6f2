/**
 * The start-up part of `npm run bench` (issue 22), run first while the bench's
 * own servers are not yet up: `herald serve` (the command `npm start` runs,
 * without npm's own launch) timed from its spawn to its first 200 on
 * `/readyz`, on a fresh PostgreSQL database, on a fresh embedded data directory,
 * and again on that directory (a restart); `herald admin user create` while
 * that embedded server runs (it reaches the server's database through the
 * server); `herald --help`, and the same through `npm run` (what npm's own
 * launch adds, when run by npm). The floor: `import("effect")` alone in a fresh
 * Node.js. These rows inform; the targets (issue 36) are on the same commands
 * as people type them (typedCommands.ts), and the gap between the two is what
 * npm, npx and the launcher add. A start that fails is reported as failed, not
 * thrown: the run goes on. It first waits (up to 90 s) for the cores to be at
 * most 20 % busy over 3 s, so a run started right after another is timed on a
 * quiet machine too.
 */
import { execFile, spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { fixed, seconds, summaryRow } from "./summary.ts"
import type { SummaryRow } from "./summary.ts"
import { atExit, freePort, msUntilReady, scratchDatabase, settle, stop, track } from "./support.ts"
import { benchTypedCommands } from "./typedCommands.ts"

const root = path.resolve(import.meta.dirname, "../..")
const entry = path.join(root, "apps/herald/src/main.ts")
const TIMEOUT_MS = 60_000

const baseEnv = () => ({ PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", HOST: "127.0.0.1", LOG_LEVEL: "Warn" })

/** Milliseconds from spawning `herald serve` to its first 200 on /readyz, and the running server (undefined time: it never answered). */
const timeStart = async (env: Record<string, string>) => {
  const port = await freePort()
  const started = performance.now()
  const child = track(spawn(process.execPath, [entry, "serve"], { cwd: root, env: { ...env, PORT: String(port) }, stdio: ["ignore", "pipe", "pipe"] }))
  return { ms: await msUntilReady(child, port, started, "herald serve"), child }
}

/** Milliseconds a command takes to exit 0 (undefined: it failed, its output on stderr). */
const timeCommand = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  new Promise<number | undefined>((resolve) => {
    const started = performance.now()
    execFile(process.execPath, args, { cwd: root, env, timeout: TIMEOUT_MS }, (error, _stdout, stderr) => {
      if (error === null) return resolve(performance.now() - started)
      console.error(`${args.join(" ")} failed (${error.message}):\n${stderr.slice(-2000)}`)
      resolve(undefined)
    })
  })

export const benchStartup = async (adminUrl: string): Promise<ReadonlyArray<SummaryRow>> => {
  // Consecutive runs: the last one's suite leaves the machine busy after it exits.
  const quiet = await settle()
  if (quiet !== undefined) {
    console.log(`start-up: waited ${seconds(quiet.waitedMs)} for a quiet machine (cores ${(100 * quiet.share).toFixed(0)} % busy over 3 s)`)
  }
  const effectImport = await timeCommand(["--input-type=module", "-e", "await import(\"effect\")"], baseEnv())

  // PostgreSQL: a fresh database, migrated by the start.
  const database = scratchDatabase(adminUrl, "herald_bench_start")
  const postgres = await timeStart({ ...baseEnv(), DATABASE_URL: database.url })
  await stop(postgres.child)
  database.drop()

  // Embedded: a fresh data directory, then a restart on it with a command run beside it.
  const dataDir = mkdtempSync(path.join(tmpdir(), "herald-bench-embedded-"))
  const removeDir = () => rmSync(dataDir, { recursive: true, force: true })
  atExit(removeDir)
  const embeddedEnv = { ...baseEnv(), HERALD_DATA_DIR: dataDir }
  const embedded = await timeStart(embeddedEnv)
  await stop(embedded.child)
  const restart = await timeStart(embeddedEnv)
  const userCreate = restart.ms === undefined
    ? undefined
    : await timeCommand([entry, "admin", "user", "create", "--email", "start@example.test", "--name", "Start"], embeddedEnv)
  await stop(restart.child)
  removeDir()

  const help = await timeCommand([entry, "--help"], baseEnv())
  // What npm's own launch adds to `npm start` (not in the rows above): the same help through `npm run`.
  const npm = process.env.npm_execpath
  const npmHelp = npm === undefined ? undefined : await timeCommand([npm, "run", "--silent", "herald", "--", "--help"], baseEnv())

  const floor = effectImport === undefined ? "—" : `import("effect") ${seconds(effectImport)}`
  // The same as people type them, beside the entry points (typedCommands.ts).
  const typed = await benchTypedCommands(floor, adminUrl)
  const info = (what: string, ms: number | undefined) => summaryRow({ what, herald: seconds(ms), floor, target: "(information)", met: undefined })
  console.log(`\nstart-up — spawn of \`herald serve\` → first 200 on /readyz; commands timed to their exit\n`)
  const ms = (n: number | undefined) => (n === undefined ? "failed" : `${fixed(n)} ms`)
  console.log(`import("effect") alone ${ms(effectImport)}; PostgreSQL, fresh database ${ms(postgres.ms)}; ` +
    `embedded, fresh data directory ${ms(embedded.ms)}, restart ${ms(restart.ms)}; ` +
    `admin user create beside the embedded server ${ms(userCreate)}; --help ${ms(help)}, through \`npm run herald\` ${ms(npmHelp)}`)
  return [
    // The entry points beside the typed rows: what npm, npx and the launcher add is the difference.
    info("entry point: herald serve → /readyz 200, PostgreSQL (fresh db)", postgres.ms),
    info("entry point: herald serve → /readyz 200, embedded (fresh dir)", embedded.ms),
    info("entry point: herald serve → /readyz 200, embedded restart", restart.ms),
    info("entry point: herald admin user create, embedded server up", userCreate),
    info("entry point: herald --help", help),
    ...(npmHelp === undefined ? [] : [
      summaryRow({ what: "… through npm (npm run herald -- --help)", herald: seconds(npmHelp), floor, target: "(information)", met: undefined })
    ]),
    ...typed
  ]
}
