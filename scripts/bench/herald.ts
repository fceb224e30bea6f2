/**
 * How the bench runs Herald, shared by `npm run bench` (run.ts) and the soak
 * (soak.ts) so both measure the same server: a fresh PostgreSQL database
 * dropped when the run exits, `herald serve` on it with the rate limits off,
 * and the bench's person with a session (through the CLI, as an operator would).
 */
import { execFileSync, spawn } from "node:child_process"
import type { ChildProcess } from "node:child_process"
import * as path from "node:path"
import { profileDir } from "./mode.ts"
import { freePort, scratchDatabase, track } from "./support.ts"

const root = path.resolve(import.meta.dirname, "../..")
const entry = path.join(root, "apps/herald/src/main.ts")

/** BENCH_DATABASE_URL, else TEST_DATABASE_URL, else the local server; each run makes its own database on it. */
export const adminUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"

/** A fresh database on the admin server (its URL), dropped when the run exits. */
export const freshDatabase = (prefix = "herald_bench") => scratchDatabase(adminUrl, prefix).url

/** Until `url` answers 2xx; throws if `server` exits first or it takes over `seconds`. */
export const waitFor = async (url: string, server: ChildProcess, seconds = 60) => {
  const deadline = Date.now() + seconds * 1000
  while (Date.now() < deadline) {
    if (server.exitCode !== null) throw new Error(`the server exited ${server.exitCode} before ${url} answered`)
    try {
      if ((await fetch(url)).ok) return
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`${url} did not answer`)
}

export interface Herald {
  readonly child: ChildProcess
  readonly port: number
  readonly baseUrl: string
  readonly env: Record<string, string>
  /** Runs a `herald` command against the server's database; its JSON output. */
  readonly cli: (...args: Array<string>) => any
}

export interface StartOptions {
  /** The port to listen on (a restart keeps its predecessor's); a free one by default. */
  readonly port?: number
  /** More environment for the server (e.g. HERALD_ONCALL_TIME_SCALE). */
  readonly env?: Record<string, string>
  /** Node.js flags for the server (profiles, `--trace-gc`). */
  readonly nodeFlags?: ReadonlyArray<string>
}

/**
 * The environment of a measured `herald serve`: the per-token rate limits off (decisions.md: throughput
 * benchmarks run with both off), and the per-address limits too: every load comes from loopback, the
 * person answering included.
 */
export const serverEnv = (databaseUrl: string, port: number): Record<string, string> => ({
  PATH: process.env.PATH ?? "",
  HOME: process.env.HOME ?? "/tmp",
  DATABASE_URL: databaseUrl,
  PORT: String(port),
  HOST: "127.0.0.1",
  LOG_LEVEL: "Warn",
  HERALD_RATE_LIMIT_PER_MINUTE: "0",
  HERALD_SEND_LIMIT_PER_MINUTE: "0",
  HERALD_ADDRESS_LIMIT_PERSON_API_PER_MINUTE: "0",
  HERALD_ADDRESS_LIMIT_AUTH_FAILURES_PER_MINUTE: "0",
  HERALD_DB_POOL_SIZE: process.env.HERALD_DB_POOL_SIZE ?? "10",
  // Passed through for trying another cadence (docs/benchmarks.md, "The first minute").
  HERALD_TABLE_MAINTENANCE_INTERVAL_SECONDS: process.env.HERALD_TABLE_MAINTENANCE_INTERVAL_SECONDS ?? "5",
  // A profile of the bundle names its chunks, not the modules scripts/profile/group.ts groups by: profiled, the sources run.
  ...(profileDir === undefined ? {} : { HERALD_FROM_SOURCE: "1" })
})

/** `herald serve` on `databaseUrl` (migrated by its start), answering /readyz. */
export const startHerald = async (databaseUrl: string, options: StartOptions = {}): Promise<Herald> => {
  const port = options.port ?? await freePort()
  const env = { ...serverEnv(databaseUrl, port), ...options.env }
  const child = track(spawn(process.execPath, [...(options.nodeFlags ?? []), entry, "serve"], { env, stdio: ["ignore", "inherit", "inherit"] }))
  const baseUrl = `http://127.0.0.1:${port}`
  await waitFor(`${baseUrl}/readyz`, child)
  const cli = (...args: Array<string>) => JSON.parse(execFileSync(process.execPath, [entry, ...args], { env, encoding: "utf8" }))
  return { child, port, baseUrl, env, cli }
}

/** The bench's person (bench@example.test) and a session of theirs, for the Person API. */
export const benchPerson = (herald: Herald) => {
  herald.cli("admin", "user", "create", "--email", "bench@example.test", "--name", "Bench")
  return herald.cli("admin", "session", "create", "--user", "bench@example.test").token as string
}
