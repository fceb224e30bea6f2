/**
 * `npm run bench`: Herald's `GET /api/agent/auth/status` (PostgreSQL mode, a
 * valid token) against raw node:http answering a fixed JSON body, measured in
 * the same run with the same load: 50 connections from a second process.
 * Prints requests/second, p50/p99 latency and the ratio Herald/raw.
 *
 * Target (issue 2): Herald ≥ 0.45 × raw node:http, p99 < 25 ms.
 *
 * Database: BENCH_DATABASE_URL, else TEST_DATABASE_URL, else the local
 * server at postgres://postgres@127.0.0.1:5432/postgres; a fresh database is
 * created on it and dropped afterwards.
 */
import { execFileSync, spawn } from "node:child_process"
import type { ChildProcess } from "node:child_process"
import { randomBytes } from "node:crypto"
import * as net from "node:net"
import * as path from "node:path"

const root = path.resolve(import.meta.dirname, "../..")
const node = process.execPath
const DURATION = Number(process.env.BENCH_SECONDS ?? 10)
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50)

const adminUrl = process.env.BENCH_DATABASE_URL ?? process.env.TEST_DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"
const children: Array<ChildProcess> = []
const cleanups: Array<() => void> = []
const cleanup = () => {
  for (const c of children) c.kill("SIGKILL")
  for (const f of cleanups.reverse()) f()
}
process.on("exit", cleanup)
process.on("SIGINT", () => process.exit(130))

const psql = (url: string, sql: string) => execFileSync("psql", [url, "-v", "ON_ERROR_STOP=1", "-qAtc", sql], { encoding: "utf8" })

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const a = s.address()
      s.close(() => resolve(typeof a === "object" && a !== null ? a.port : 0))
    })
  })

const waitFor = async (url: string, seconds = 60) => {
  const deadline = Date.now() + seconds * 1000
  while (Date.now() < deadline) {
    try {
      if ((await fetch(url)).ok) return
    } catch {
      // not up yet
    }
    await new Promise((r) => setTimeout(r, 100))
  }
  throw new Error(`${url} did not answer`)
}

const load = (url: string, authorization?: string, seconds = DURATION) =>
  new Promise<{ requestsPerSecond: number; p50: number; p99: number; non2xx: number; errors: number; total: number }>((resolve, reject) => {
    const args = [path.join(import.meta.dirname, "load.ts"), url, String(seconds), String(CONNECTIONS), ...(authorization ? [authorization] : [])]
    const child = spawn(node, args, { stdio: ["ignore", "pipe", "inherit"] })
    let out = ""
    child.stdout.on("data", (d) => (out += d))
    child.on("exit", (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`load generator exited ${code}`))))
  })

const main = async () => {
  // A fresh database for this run.
  const dbName = `herald_bench_${randomBytes(4).toString("hex")}`
  psql(adminUrl, `CREATE DATABASE ${dbName}`)
  cleanups.push(() => {
    try {
      psql(adminUrl, `DROP DATABASE IF EXISTS ${dbName} WITH (FORCE)`)
    } catch {
      // best effort
    }
  })
  const u = new URL(adminUrl)
  u.pathname = `/${dbName}`
  const databaseUrl = u.toString()

  // Raw node:http baseline.
  const raw = spawn(node, [path.join(import.meta.dirname, "raw-server.ts"), "0"], { stdio: ["ignore", "pipe", "inherit"] })
  children.push(raw)
  const rawPort = await new Promise<number>((resolve) => raw.stdout.once("data", (d) => resolve(Number(String(d).trim()))))

  // Herald on PostgreSQL, with the per-token rate limits off (decisions.md: throughput benchmarks run with both off).
  const port = await freePort()
  const env = {
    PATH: process.env.PATH ?? "",
    HOME: process.env.HOME ?? "/tmp",
    DATABASE_URL: databaseUrl,
    PORT: String(port),
    HOST: "127.0.0.1",
    LOG_LEVEL: "Warn",
    HERALD_RATE_LIMIT_PER_MINUTE: "0",
    HERALD_SEND_LIMIT_PER_MINUTE: "0"
  }
  const herald = spawn(node, [path.join(root, "apps/herald/src/main.ts"), "serve"], { env, stdio: ["ignore", "inherit", "inherit"] })
  children.push(herald)
  await waitFor(`http://127.0.0.1:${port}/readyz`)

  const cli = (...args: Array<string>) =>
    JSON.parse(execFileSync(node, [path.join(root, "apps/herald/src/main.ts"), ...args], { env, encoding: "utf8" }))
  cli("admin", "user", "create", "--email", "bench@example.test", "--name", "Bench")
  const session = cli("admin", "session", "create", "--user", "bench@example.test").token as string
  const created = await fetch(`http://127.0.0.1:${port}/api/app/tokens`, {
    method: "POST",
    headers: { authorization: `Bearer ${session}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "bench", scopes: [] })
  }).then((r) => r.json()) as { secret: string }
  const authorization = `Bearer ${created.secret}`
  const heraldUrl = `http://127.0.0.1:${port}/api/agent/auth/status`
  const check = await fetch(heraldUrl, { headers: { authorization } })
  if (check.status !== 200) throw new Error(`auth/status answered ${check.status}`)

  // Warm both (JIT, connection pools), then measure each in turn.
  await load(`http://127.0.0.1:${rawPort}/`, undefined, 3)
  await load(heraldUrl, authorization, 3)
  const rawResult = await load(`http://127.0.0.1:${rawPort}/`)
  const heraldResult = await load(heraldUrl, authorization)
  if (heraldResult.non2xx > 0 || heraldResult.errors > 0) {
    throw new Error(`Herald answered ${heraldResult.non2xx} non-2xx and ${heraldResult.errors} errors`)
  }

  const ratio = heraldResult.requestsPerSecond / rawResult.requestsPerSecond
  const row = (name: string, r: typeof rawResult) =>
    `${name.padEnd(36)} ${r.requestsPerSecond.toFixed(0).padStart(9)} ${String(r.p50).padStart(8)} ${String(r.p99).padStart(8)}`
  console.log(`\n${CONNECTIONS} connections, ${DURATION} s each, load from a second process\n`)
  console.log(`${"".padEnd(36)} ${"req/s".padStart(9)} ${"p50 ms".padStart(8)} ${"p99 ms".padStart(8)}`)
  console.log(row("raw node:http (fixed JSON)", rawResult))
  console.log(row("herald GET /api/agent/auth/status", heraldResult))
  console.log(`\nratio herald/raw: ${ratio.toFixed(2)}  (target ≥ 0.45)   herald p99: ${heraldResult.p99} ms (target < 25 ms)`)
  const pass = ratio >= 0.45 && heraldResult.p99 < 25
  console.log(pass ? "targets met" : "TARGETS MISSED")
}

main().then(() => process.exit(0), (error) => {
  console.error(error)
  process.exit(1)
})
