/**
 * Start-up as people type it (issue 36, item 1): `npm start`, `npx herald
 * --help` and `npx herald admin user create`, each spawned as a fresh shell
 * would, the system's `npm`/`npx` on a PATH without the repository's
 * node_modules/.bin and no `npm_*` variables, so npm's own launch, the
 * package-manager walk of `npx` and the launcher's second Node (when the
 * system's Node is older than 24) are all in the figure. startup.ts times the
 * entry points themselves beside these rows: the gap is what the commands add.
 */
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { seconds, summaryRow } from "./summary.ts"
import type { SummaryRow } from "./summary.ts"
import { atExit, freePort, msUntilReady, scratchDatabase } from "./support.ts"

const root = path.resolve(import.meta.dirname, "../..")
const TIMEOUT_MS = 60_000

/** The environment of a new terminal: the system's PATH (no node_modules/.bin of any project), no npm state. */
const freshShell = (extra: Record<string, string>) => ({
  PATH: (process.env.PATH ?? "").split(path.delimiter).filter((p) => !p.includes(`node_modules${path.sep}.bin`)).join(path.delimiter),
  HOME: process.env.HOME ?? "/tmp",
  HOST: "127.0.0.1",
  LOG_LEVEL: "Warn",
  ...extra
})

/** Whether any process of the group led by `pid` is alive. */
const groupAlive = (pid: number) => {
  try {
    process.kill(-pid, 0)
    return true
  } catch {
    return false
  }
}

/**
 * Stops a command and everything it started (npm's script shell and its Node): SIGTERM to its process group,
 * then waits until the whole group is gone (npm exits before its Node has closed the embedded database), SIGKILL after 10 s.
 */
const stopGroup = async (pid: number | undefined) => {
  if (pid === undefined || !groupAlive(pid)) return
  process.kill(-pid, "SIGTERM")
  const deadline = performance.now() + 10_000
  while (groupAlive(pid) && performance.now() < deadline) await new Promise((r) => setTimeout(r, 20))
  if (groupAlive(pid)) process.kill(-pid, "SIGKILL")
}

/** Milliseconds from typing `command` to its exit with 0 (undefined: it failed; its output on stderr). */
const timeTyped = (command: string, args: ReadonlyArray<string>, env: Record<string, string>) =>
  new Promise<number | undefined>((resolve) => {
    const started = performance.now()
    let output = ""
    const child = spawn(command, args, { cwd: root, env, stdio: ["ignore", "pipe", "pipe"] })
    child.stdout.on("data", (d) => (output += d))
    child.stderr.on("data", (d) => (output += d))
    const timer = setTimeout(() => child.kill("SIGKILL"), TIMEOUT_MS)
    child.once("exit", (code) => {
      clearTimeout(timer)
      if (code === 0) return resolve(performance.now() - started)
      console.error(`${command} ${args.join(" ")} exited ${code}:\n${output.slice(-2000)}`)
      resolve(undefined)
    })
  })

/** `npm start` typed in the repository: milliseconds to the first 200 on /readyz, and how to stop it. */
const timeNpmStart = async (env: Record<string, string>) => {
  const port = await freePort()
  const started = performance.now()
  const child = spawn("npm", ["start"], { cwd: root, env: { ...env, PORT: String(port) }, stdio: ["ignore", "pipe", "pipe"], detached: true })
  atExit(() => {
    if (child.pid !== undefined && groupAlive(child.pid)) process.kill(-child.pid, "SIGKILL")
  })
  return { ms: await msUntilReady(child, port, started, "npm start"), stop: () => stopGroup(child.pid) }
}

/**
 * `npm start` as the first thing after `npm install`: a fresh data directory, and the caches as an install
 * leaves them — the embedded template (node_modules/.cache/herald) and the compile cache (a directory of
 * its own, as on a new machine; the developer's own is left alone) emptied, then made again by what
 * `npm install` runs last (`npm run prepare`: scripts/install/warm.ts), untimed.
 */
const timeFirstStart = async () => {
  rmSync(path.join(root, "node_modules/.cache/herald"), { recursive: true, force: true })
  const dataDir = mkdtempSync(path.join(tmpdir(), "herald-bench-first-"))
  const compileCache = mkdtempSync(path.join(tmpdir(), "herald-bench-compile-cache-"))
  const removeDirs = () => [dataDir, compileCache].forEach((d) => rmSync(d, { recursive: true, force: true }))
  atExit(removeDirs)
  const env = freshShell({ HERALD_DATA_DIR: dataDir, NODE_COMPILE_CACHE: compileCache })
  const installed = await timeTyped("npm", ["run", "--silent", "prepare"], env)
  const first = await timeNpmStart(env)
  await first.stop()
  removeDirs()
  return { install: installed, start: first.ms }
}

export const benchTypedCommands = async (floor: string, adminUrl: string): Promise<ReadonlyArray<SummaryRow>> => {
  const { install, start: firstAfterInstall } = await timeFirstStart()
  // Warm: the embedded template and Node's caches made by a first start, as on a developer's second `npm start`.
  const dataDir = mkdtempSync(path.join(tmpdir(), "herald-bench-typed-"))
  const removeDir = () => rmSync(dataDir, { recursive: true, force: true })
  atExit(removeDir)
  const env = freshShell({ HERALD_DATA_DIR: dataDir })
  const first = await timeNpmStart(env)
  await first.stop()
  const warm = await timeNpmStart(env)
  const userCreate = warm.ms === undefined
    ? undefined
    : await timeTyped("npx", ["herald", "admin", "user", "create", "--email", "typed@example.test", "--name", "Typed"], env)
  await warm.stop()
  removeDir()
  const help = await timeTyped("npx", ["herald", "--help"], freshShell({}))
  // PostgreSQL: `npm start` with DATABASE_URL naming a fresh database, which the start migrates.
  const database = scratchDatabase(adminUrl, "herald_bench_typed")
  const onPostgres = await timeNpmStart(freshShell({ DATABASE_URL: database.url }))
  await onPostgres.stop()
  database.drop()

  const under = (ms: number | undefined, limit: number) => ms !== undefined && ms < limit
  console.log(`\nas typed — npm start: PostgreSQL ${seconds(onPostgres.ms)}, embedded warm ${seconds(warm.ms)}, ` +
    `first after install ${seconds(firstAfterInstall)} (install's last step, prepare, ${seconds(install)}); npx herald admin user create beside it ${seconds(userCreate)}; ` +
    `npx herald --help ${seconds(help)} (npm, npx and node from the system PATH)`)
  return [
    summaryRow({ what: "typed: npm start → /readyz 200, PostgreSQL (fresh db)", herald: seconds(onPostgres.ms), floor, target: "< 2.5 s", met: under(onPostgres.ms, 2500) }),
    summaryRow({ what: "typed: npm start → /readyz 200, embedded, warm", herald: seconds(warm.ms), floor, target: "< 3.5 s", met: under(warm.ms, 3500) }),
    summaryRow({
      what: "typed: first npm start after npm install (embedded, fresh dir)",
      herald: seconds(firstAfterInstall),
      floor,
      target: "< 8 s",
      met: under(firstAfterInstall, 8000)
    }),
    summaryRow({ what: "typed: npx herald admin user create, server up", herald: seconds(userCreate), floor, target: "< 1.5 s", met: under(userCreate, 1500) }),
    summaryRow({ what: "typed: npx herald --help", herald: seconds(help), floor, target: "< 0.8 s", met: under(help, 800) })
  ]
}
