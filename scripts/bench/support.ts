/**
 * What the bench parts share: reading JSON answers, running a load process
 * whose one JSON line is its result, the processes to kill when the run ends,
 * the tables of the autocannon parts, and waiting for a quiet machine.
 */
import { randomBytes } from "node:crypto"
import { execFileSync, spawn } from "node:child_process"
import { readFileSync } from "node:fs"
import type { ChildProcess } from "node:child_process"
import * as net from "node:net"
import * as path from "node:path"
import { createInterface } from "node:readline"
import type { Readable } from "node:stream"
import { CONNECTIONS, DURATION } from "./mode.ts"

/** What a load process reports (loadReport.ts). */
export interface LoadResult {
  readonly requestsPerSecond: number
  readonly p50: number
  readonly p99: number
  readonly non2xx: number
  readonly errors: number
  readonly timeouts: number
  readonly total: number
}

/** The JSON body of a successful answer; anything else throws with the answer's text. */
export const json = async (response: Response) => {
  if (!response.ok) throw new Error(`${response.url} answered ${response.status}: ${await response.text()}`)
  return response.json() as Promise<Record<string, any>>
}

/**
 * Runs a script of this folder in its own Node.js process and parses the JSON
 * line it prints last; `onMeasuring` is called when it prints `measuring` (a
 * load whose warm-up is over).
 */
export const runJson = <A = LoadResult>(script: string, args: ReadonlyArray<string>, onMeasuring?: () => void) =>
  new Promise<A>((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(import.meta.dirname, script), ...args], { stdio: ["ignore", "pipe", "inherit"] })
    const lines: Array<string> = []
    createInterface({ input: child.stdout }).on("line", (line) => {
      if (line === "measuring") onMeasuring?.()
      else lines.push(line)
    })
    child.on("close", (code) => (code === 0 ? resolve(JSON.parse(lines.at(-1) ?? "")) : reject(new Error(`${script} exited ${code}`))))
  })

/** Processes the run started and what to undo (databases, directories): killed and undone when the run exits. */
const children: Array<ChildProcess> = []
const cleanups: Array<() => void> = []
export const track = <C extends ChildProcess>(child: C): C => {
  children.push(child)
  return child
}
export const atExit = (f: () => void) => {
  cleanups.push(f)
}
process.on("exit", () => {
  for (const c of children) c.kill("SIGKILL")
  for (const f of cleanups.reverse()) f()
})

export const psql = (url: string, sql: string) =>
  execFileSync("psql", [url, "-v", "ON_ERROR_STOP=1", "-qAtc", sql], { encoding: "utf8" })

/**
 * Milliseconds from `started` (a `performance.now()`) to the first 200 on `/readyz` at `port`, polled every
 * 20 ms; undefined when `child` exits first or a minute passes, with `what` and the child's output on stderr.
 */
export const msUntilReady = async (child: ChildProcess, port: number, started: number, what: string) => {
  let output = ""
  child.stdout?.on("data", (d) => (output += d))
  child.stderr?.on("data", (d) => (output += d))
  while (performance.now() - started < 60_000 && child.exitCode === null) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/readyz`)).status === 200) return performance.now() - started
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 20))
  }
  console.error(`${what} did not answer /readyz within 60 s (exit ${child.exitCode}):\n${output.slice(-2000)}`)
  return undefined
}

/** A fresh PostgreSQL database on the server of `adminUrl` (`<prefix>_<random>`), dropped by `drop` (and at exit). */
export const scratchDatabase = (adminUrl: string, prefix: string) => {
  const name = `${prefix}_${randomBytes(4).toString("hex")}`
  psql(adminUrl, `CREATE DATABASE ${name}`)
  let dropped = false
  const drop = () => {
    if (dropped) return
    dropped = true
    try {
      psql(adminUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    } catch {
      // best effort
    }
  }
  atExit(drop)
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  return { url: url.toString(), drop }
}

export const freePort = () =>
  new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const a = s.address()
      s.close(() => resolve(typeof a === "object" && a !== null ? a.port : 0))
    })
  })

/** Stops a server with SIGTERM (a graceful stop: profiles written, the embedded database closed), SIGKILL if it lingers. */
export const stop = (child: ChildProcess, seconds = 10) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    const lingering = setTimeout(() => child.kill("SIGKILL"), seconds * 1000)
    child.once("exit", () => {
      clearTimeout(lingering)
      resolve()
    })
    child.kill("SIGTERM")
  })

/** The port a baseline server prints on its first line of stdout. */
export const portOf = (child: ChildProcess & { stdout: Readable }) =>
  new Promise<number>((resolve) => child.stdout.once("data", (d) => resolve(Number(String(d).trim()))))

export interface Request {
  readonly method?: "GET" | "POST"
  readonly headers?: Record<string, string>
  readonly body?: string
}

/** An autocannon load (load.ts) from its own process. */
export const load = (url: string, request: Request = {}, seconds = DURATION) =>
  runJson("load.ts", [url, String(seconds), String(CONNECTIONS), JSON.stringify(request)])

/** A part's table: a row per load. */
export const row = (name: string, r: LoadResult, unit = "req/s") =>
  `${name.padEnd(50)} ${r.requestsPerSecond.toFixed(0).padStart(9)} ${unit.padEnd(6)} ${String(r.p50).padStart(8)} ${String(r.p99).padStart(8)}`
export const header = () =>
  console.log(`${"".padEnd(50)} ${"rate".padStart(9)} ${"".padEnd(6)} ${"p50 ms".padStart(8)} ${"p99 ms".padStart(8)}`)
export const refuseErrors = (name: string, r: LoadResult) => {
  if ((r.non2xx ?? 0) > 0 || (r.errors ?? 0) > 0) throw new Error(`${name} answered ${r.non2xx} non-2xx and ${r.errors} errors`)
}

/** The machine's busy and total CPU ticks so far (Linux `/proc/stat`), undefined elsewhere. */
const cpuTicks = () => {
  try {
    // user nice system idle iowait irq softirq steal (guest time is already inside user and nice).
    const fields = readFileSync("/proc/stat", "utf8").split("\n")[0]!.trim().split(/\s+/).slice(1, 9).map(Number)
    const idle = fields[3]! + (fields[4] ?? 0)
    const total = fields.reduce((a, b) => a + b, 0)
    return { busy: total - idle, total }
  } catch {
    return undefined
  }
}

/**
 * Waits until the machine's cores were at most `busyShare` busy over `windowMs`, or `maxMs` passed: the
 * milliseconds waited and the last window's share, or undefined where the CPU's ticks cannot be read
 * (not Linux). The run before (its suite, PostgreSQL's vacuum, the page cache written back) leaves the
 * machine busy for a while after its processes exited, which a start-up timed at once would carry.
 */
export const settle = async (busyShare = 0.2, windowMs = 3_000, maxMs = 90_000) => {
  const started = performance.now()
  let before = cpuTicks()
  while (before !== undefined) {
    await new Promise((resolve) => setTimeout(resolve, windowMs))
    const after = cpuTicks()
    if (after === undefined) return undefined
    const share = (after.busy - before.busy) / Math.max(1, after.total - before.total)
    const waitedMs = performance.now() - started
    if (share <= busyShare || waitedMs >= maxMs) return { waitedMs, share }
    before = after
  }
  return undefined
}
