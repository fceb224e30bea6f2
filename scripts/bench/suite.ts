/**
 * The test suite as a new contributor runs it (issue 36, item 4): `npm test`
 * typed from a fresh shell in the checkout, on the embedded database (no
 * `TEST_DATABASE_URL`), as on a fresh clone after `npm install`: every cache a
 * run leaves emptied — the embedded template under node_modules/.cache/herald,
 * Node's compile cache (a directory of its own), vitest's module cache and its
 * record of file durations — then what `npm install` runs last (`npm run
 * prepare`) made again, untimed. Timed from the command to its exit; a failing
 * suite is a failed row, not a time. Eight minutes of two busy cores, so it runs in
 * the full bench after every other part and alone with `BENCH_ONLY=suite`, never
 * with `--quick`.
 */
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { seconds, summaryRow } from "./summary.ts"
import type { SummaryRow } from "./summary.ts"
import { atExit } from "./support.ts"

const root = path.resolve(import.meta.dirname, "../..")
const TARGET_MS = 240_000

/** The environment of a new terminal: the system's PATH (no node_modules/.bin), no database URL, no npm state. */
const freshShell = (compileCache: string) => ({
  PATH: (process.env.PATH ?? "").split(path.delimiter).filter((p) => !p.includes(`node_modules${path.sep}.bin`)).join(path.delimiter),
  HOME: process.env.HOME ?? "/tmp",
  NODE_COMPILE_CACHE: compileCache,
  ...(process.env.CHROMIUM_PATH === undefined ? {} : { CHROMIUM_PATH: process.env.CHROMIUM_PATH })
})

/** The counts vitest prints last: `Tests  983 passed | 18 skipped (1001)`. */
const testsLine = (output: string) =>
  output.replace(/\x1b\[[0-9;]*m/g, "").split("\n").find((l) => /^\s*Tests\s/.test(l))?.trim().replace(/\s+/g, " ")

const npm = (args: ReadonlyArray<string>, compileCache: string) =>
  new Promise<{ code: number | null; output: string }>((resolve) => {
    let output = ""
    const child = spawn("npm", args, { cwd: root, env: freshShell(compileCache), stdio: ["ignore", "pipe", "pipe"] })
    child.stdout.on("data", (d) => (output += d))
    child.stderr.on("data", (d) => (output += d))
    child.once("exit", (code) => resolve({ code, output }))
  })

export const benchSuite = async (): Promise<ReadonlyArray<SummaryRow>> => {
  for (const cache of ["node_modules/.cache/herald", "node_modules/.vitest-cache", "node_modules/.vite/vitest"]) {
    rmSync(path.join(root, cache), { recursive: true, force: true })
  }
  const compileCache = mkdtempSync(path.join(tmpdir(), "herald-bench-suite-cache-"))
  atExit(() => rmSync(compileCache, { recursive: true, force: true }))
  const prepared = await npm(["run", "--silent", "prepare"], compileCache)
  if (prepared.code !== 0) console.error(`npm run prepare exited ${prepared.code}:\n${prepared.output.slice(-2000)}`)
  console.log("\nnpm test, embedded, as on a fresh clone after npm install — about 4 to 8 minutes")
  const started = performance.now()
  const { code, output } = await npm(["test"], compileCache)
  const ms = performance.now() - started
  const counts = testsLine(output) ?? "no counts printed"
  if (code !== 0) console.error(`npm test exited ${code}:\n${output.slice(-4000)}`)
  console.log(`npm test: ${seconds(ms)}, exit ${code}; ${counts}`)
  return [
    summaryRow({
      what: "npm test, embedded, fresh clone's caches",
      herald: code === 0 ? seconds(ms) : `failed (${counts})`,
      target: "≤ 240 s",
      met: code === 0 && ms <= TARGET_MS
    })
  ]
}
