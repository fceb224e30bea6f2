/**
 * `npm run bench`: Herald on PostgreSQL next to its baselines, measured in the
 * same run with the same load (50 connections from a second process):
 *
 * 1. `GET /api/agent/auth/status` with a valid token vs raw node:http answering
 *    a fixed JSON body. Target: ratio ≥ 0.45, p99 < 25 ms. Also measured: a bare
 *    Effect HttpApi server answering the same record (effect-floor.ts), the
 *    floor Herald's stack sets.
 * 2. `POST /api/agent/notifications` to an account with 3 sandbox devices vs a
 *    raw node:http JSON echo and a raw `pg` single-row INSERT loop, and vs two
 *    floors doing the least work the durable outbox asks for (floor-sql.ts):
 *    raw node:http + raw pg (notifications-floor.ts) and bare HttpApi +
 *    sql-pg (notifications-effect-floor.ts), with CPU per notification. Target:
 *    ≥ 1,500 notifications/s with p99 < 50 ms, and every accepted
 *    notification's pushes at the sandbox within 2 s (lag p50/p99 printed).
 *
 * 3. Prompts (scripts/bench/prompts.ts, run first while the server is idle): create → answer → wait round trip
 *    (target p99 < 50 ms idle) and 2,000 concurrent waiters held then released
 *    (target: each within 2 s of its answer), with server memory per waiter.
 *
 * 4. Live activities (scripts/bench/activities.ts): 200 activities × 2 devices, 10 routine updates/s each
 *    for 20 s. Target: queued work never beyond one snapshot per device per activity, event-loop p99 < 50 ms.
 *
 * 5. Pages (scripts/bench/pages.ts): 500 pages in 10 s to one on-call group with a 1-minute escalation;
 *    page creation p50/p99 and each escalation step's lag behind its due time (target p99 < 1 s).
 *    `BENCH_ONCALL_TIME_SCALE` (default 1: the minute is waited for) is the server's `HERALD_ONCALL_TIME_SCALE`.
 *
 * `BENCH_ONLY=auth|notifications|prompts|activities|pages` runs one part; `BENCH_PROFILE=<dir>` writes a CPU
 * profile of the server there; `BENCH_NODE_FLAGS` passes Node.js flags to the server (`--trace-gc`, `--heap-prof`).
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
import { benchActivities } from "./activities.ts"
import { cpuPer, cpuSecondsOf } from "./cpu.ts"
import { runJson } from "./support.ts"
import type { LoadResult } from "./support.ts"
import { benchPages } from "./pages.ts"
import { benchPrompts } from "./prompts.ts"

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

interface Request {
  readonly method?: "GET" | "POST"
  readonly headers?: Record<string, string>
  readonly body?: string
}

const load = (url: string, request: Request = {}, seconds = DURATION) =>
  runJson("load.ts", [url, String(seconds), String(CONNECTIONS), JSON.stringify(request)])

const only = process.env.BENCH_ONLY
/** The server's on-call time scale for the pages part: 1 waits the real minute of escalation. */
const oncallTimeScale = process.env.BENCH_ONCALL_TIME_SCALE ?? "1"
const row = (name: string, r: LoadResult, unit = "req/s") =>
  `${name.padEnd(50)} ${r.requestsPerSecond.toFixed(0).padStart(9)} ${unit.padEnd(6)} ${String(r.p50).padStart(8)} ${String(r.p99).padStart(8)}`
const header = () => console.log(`${"".padEnd(50)} ${"rate".padStart(9)} ${"".padEnd(6)} ${"p50 ms".padStart(8)} ${"p99 ms".padStart(8)}`)
const refuseErrors = (name: string, r: LoadResult) => {
  if ((r.non2xx ?? 0) > 0 || (r.errors ?? 0) > 0) throw new Error(`${name} answered ${r.non2xx} non-2xx and ${r.errors} errors`)
}

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
  // The framework floor: a bare Effect HttpApi server answering the same record (effect-floor.ts).
  const floor = spawn(node, [path.join(import.meta.dirname, "effect-floor.ts"), "0"], { stdio: ["ignore", "pipe", "inherit"] })
  children.push(floor)
  const floorPort = await new Promise<number>((resolve) => floor.stdout.once("data", (d) => resolve(Number(String(d).trim()))))

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
    HERALD_SEND_LIMIT_PER_MINUTE: "0",
    HERALD_DB_POOL_SIZE: process.env.HERALD_DB_POOL_SIZE ?? "10",
    HERALD_ONCALL_TIME_SCALE: oncallTimeScale
  }
  // BENCH_PROFILE=<dir>: a V8 CPU profile of the server, written there when the run ends.
  // BENCH_NODE_FLAGS: more Node.js flags for the server (`--trace-gc`, `--heap-prof`, …).
  const profile = process.env.BENCH_PROFILE
  const nodeFlags = process.env.BENCH_NODE_FLAGS?.split(" ").filter(Boolean) ?? []
  const herald = spawn(node, [
    ...(profile !== undefined ? ["--cpu-prof", `--cpu-prof-dir=${profile}`] : []),
    ...nodeFlags,
    path.join(root, "apps/herald/src/main.ts"),
    "serve"
  ], { env, stdio: ["ignore", "inherit", "inherit"] })
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
  const rawUrl = `http://127.0.0.1:${rawPort}/`
  const results: Array<boolean> = []

  // Prompts first, while the server is idle (the target is an idle round trip).
  if (only === undefined || only === "prompts") {
    results.push(await benchPrompts({ baseUrl: `http://127.0.0.1:${port}`, session, pid: herald.pid! }))
  }

  if (only === undefined || only === "auth") {
    const heraldUrl = `http://127.0.0.1:${port}/api/agent/auth/status`
    const check = await fetch(heraldUrl, { headers: { authorization } })
    if (check.status !== 200) throw new Error(`auth/status answered ${check.status}`)
    // Warm both (JIT, connection pools), then measure each in turn.
    const floorUrl = `http://127.0.0.1:${floorPort}/status`
    await load(rawUrl, {}, 3)
    await load(floorUrl, {}, 3)
    await load(heraldUrl, { headers: { authorization } }, 3)
    const rawResult = await load(rawUrl)
    const { cpuMs: floorCpu, result: floorResult } = await cpuPer(floor.pid!, () => load(floorUrl), (r) => r.total)
    const { cpuMs: authCpu, result: heraldResult } = await cpuPer(herald.pid!, () => load(heraldUrl, { headers: { authorization } }), (r) => r.total)
    refuseErrors("auth/status", heraldResult)
    const ratio = heraldResult.requestsPerSecond / rawResult.requestsPerSecond
    console.log(`\nauth status — ${CONNECTIONS} connections, ${DURATION} s each, load from a second process\n`)
    header()
    console.log(row("raw node:http (fixed JSON)", rawResult))
    console.log(row("bare Effect HttpApi (same record, no middleware)", floorResult))
    console.log(row("herald GET /api/agent/auth/status", heraldResult))
    console.log(`\nratio herald/raw: ${ratio.toFixed(2)}  (target ≥ 0.45)   herald p99: ${heraldResult.p99} ms (target < 25 ms)`)
    console.log(`ratio bare Effect HttpApi/raw: ${(floorResult.requestsPerSecond / rawResult.requestsPerSecond).toFixed(2)}`)
    console.log(`server CPU per request: herald ${authCpu.toFixed(3)} ms, bare Effect HttpApi ${floorCpu.toFixed(3)} ms`)
    results.push(ratio >= 0.45 && heraldResult.p99 < 25)
  }

  if (only === undefined || only === "notifications") {
    for (const [platform, n] of [["ios", 1], ["ios", 2], ["android", 3]] as const) {
      const device = await fetch(`http://127.0.0.1:${port}/api/app/devices`, {
        method: "POST",
        headers: { authorization: `Bearer ${session}`, "content-type": "application/json" },
        body: JSON.stringify({ platform, deviceName: `bench ${n}`, pushToken: `bench-device-${n}` })
      })
      if (device.status !== 201) throw new Error(`device registration answered ${device.status}`)
    }
    const sender = await fetch(`http://127.0.0.1:${port}/api/app/tokens`, {
      method: "POST",
      headers: { authorization: `Bearer ${session}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "bench sender", scopes: ["notifications:send"] })
    }).then((r) => r.json()) as { secret: string }
    const notificationsUrl = `http://127.0.0.1:${port}/api/agent/notifications`
    const body = JSON.stringify({ title: "Build finished", body: "All 212 tests passed on main.", url: "https://ci.example.test/1" })
    const post: Request = {
      method: "POST",
      headers: { authorization: `Bearer ${sender.secret}`, "content-type": "application/json" },
      body
    }
    const echo: Request = { method: "POST", headers: { "content-type": "application/json" }, body }

    // The floors: the least work the durable outbox asks for (floor-sql.ts), in raw node:http + raw pg
    // (notifications-floor.ts) and on Herald's stack, bare HttpApi + sql-pg (notifications-effect-floor.ts).
    // Each is loaded alone, then stopped; CPU is read from its process and its database backends.
    const backendsOf = (application: string) =>
      psql(databaseUrl, `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = '${application}'`)
        .trim().split("\n").filter(Boolean).map(Number)
    const floorPost: Request = { ...post, headers: { ...post.headers, authorization: "Bearer floor-token" } }
    const measureFloor = async (script: string, application: string) => {
      const server = spawn(node, [path.join(import.meta.dirname, script), databaseUrl, "0"], { stdio: ["ignore", "pipe", "inherit"] })
      children.push(server)
      const floorPort = await new Promise<number>((resolve) => server.stdout.once("data", (d) => resolve(Number(String(d).trim()))))
      const url = `http://127.0.0.1:${floorPort}/notifications`
      await load(url, floorPost, 3)
      const floorBackends = backendsOf(application)
      const dbBefore = cpuSecondsOf(floorBackends)
      const { cpuMs, result } = await cpuPer(server.pid!, () => load(url, floorPost), (r) => r.total)
      refuseErrors(script, result)
      const dbMs = ((cpuSecondsOf(floorBackends) - dbBefore) * 1000) / Math.max(1, result.total)
      // Gone before the next measurement starts (killed outright if it lingers).
      if (server.exitCode === null && server.signalCode === null) {
        await new Promise<void>((resolve) => {
          const lingering = setTimeout(() => server.kill("SIGKILL"), 5_000)
          server.once("exit", () => {
            clearTimeout(lingering)
            resolve()
          })
          server.kill("SIGTERM")
        })
      }
      return { result, cpuMs, dbMs }
    }

    await load(rawUrl, echo, 3)
    await load(notificationsUrl, post, 3)
    const echoResult = await load(rawUrl, echo)
    const pgResult = await runJson("raw-pg.ts", [databaseUrl, String(DURATION), String(CONNECTIONS)])
    const rawFloor = await measureFloor("notifications-floor.ts", "herald-floor")
    const effectFloor = await measureFloor("notifications-effect-floor.ts", "herald-effect-floor")
    psql(databaseUrl, "TRUNCATE push_sandbox_deliveries")
    const since = psql(databaseUrl, "SELECT now()").trim()
    // The database's share: the backends serving this database (the server's pool), measured over the same load.
    const backends = backendsOf("herald")
    const dbBefore = cpuSecondsOf(backends)
    const { cpuMs: sendCpu, result: sendResult } = await cpuPer(herald.pid!, () => load(notificationsUrl, post), (r) => r.total)
    const dbCpu = ((cpuSecondsOf(backends) - dbBefore) * 1000) / Math.max(1, sendResult.total)
    refuseErrors("notifications", sendResult)

    // Every accepted push at the sandbox: wait (bounded) for the queue to drain, then read the lag
    // from each receipt (enqueued → provider accepted) of this run.
    const drainDeadline = Date.now() + 30_000
    const open = () => Number(psql(databaseUrl, `SELECT count(*) FROM push_receipts WHERE status IN ('pending', 'sending')`))
    while (open() > 0 && Date.now() < drainDeadline) await new Promise((r) => setTimeout(r, 200))
    const [accepted, notAccepted, lagP50, lagP99, late] = psql(databaseUrl, `
      SELECT count(*) FILTER (WHERE status = 'accepted'),
             count(*) FILTER (WHERE status <> 'accepted'),
             round((percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM checked_at - created_at)) * 1000)::numeric, 1),
             round((percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM checked_at - created_at)) * 1000)::numeric, 1),
             count(*) FILTER (WHERE checked_at - created_at > interval '2 seconds' OR status <> 'accepted')
      FROM push_receipts WHERE purpose = 'alert' AND created_at >= '${since}'`).trim().split("|")

    const reasons = psql(databaseUrl, `
      SELECT status || ' ' || COALESCE(error_code, '') || ' ×' || count(*) FROM push_receipts
      WHERE purpose = 'alert' AND created_at >= '${since}' AND status <> 'accepted' GROUP BY status, error_code`).trim()

    console.log(`\nnotifications — 3 sandbox devices, ${CONNECTIONS} connections, ${DURATION} s each\n`)
    header()
    console.log(row("raw node:http (JSON echo)", echoResult))
    console.log(row("raw pg single-row INSERT loop", pgResult, "rows/s"))
    console.log(row("floor: durable pushes, raw node:http + pg", rawFloor.result))
    console.log(row("floor: durable pushes, bare HttpApi + sql-pg", effectFloor.result))
    console.log(row("herald POST /api/agent/notifications", sendResult))
    const vsHttp = sendResult.requestsPerSecond / echoResult.requestsPerSecond
    const vsPg = sendResult.requestsPerSecond / pgResult.requestsPerSecond
    const vsRawFloor = sendResult.requestsPerSecond / rawFloor.result.requestsPerSecond
    const vsEffectFloor = sendResult.requestsPerSecond / effectFloor.result.requestsPerSecond
    console.log(`\nratio herald/raw http: ${vsHttp.toFixed(2)}   herald/raw pg insert: ${vsPg.toFixed(2)}`)
    console.log(`ratio herald/raw floor: ${vsRawFloor.toFixed(2)}   herald/HttpApi floor: ${vsEffectFloor.toFixed(2)}`)
    console.log(`pushes: ${accepted} accepted, ${notAccepted} not accepted; enqueue → sandbox lag p50 ${lagP50} ms, p99 ${lagP99} ms; ${late} later than 2 s`)
    const cpu = (name: string, server: number, db: number) => `${name} ${server.toFixed(3)} + PostgreSQL ${db.toFixed(3)} ms`
    console.log(`CPU per notification (its pushes included): ${cpu("herald", sendCpu, dbCpu)}; ` +
      `${cpu("raw floor", rawFloor.cpuMs, rawFloor.dbMs)}; ${cpu("HttpApi floor", effectFloor.cpuMs, effectFloor.dbMs)}`)
    if (reasons !== "") console.log(`not accepted: ${reasons.split("\n").join(", ")}`)
    console.log(`target: ≥ 1500 notifications/s (${sendResult.requestsPerSecond.toFixed(0)}), p99 < 50 ms (${sendResult.p99}), every push within 2 s (${late} late)`)
    results.push(sendResult.requestsPerSecond >= 1500 && sendResult.p99 < 50 && Number(late) === 0)
  }

  if (only === undefined || only === "activities") {
    results.push(await benchActivities({ baseUrl: `http://127.0.0.1:${port}`, session, databaseUrl, pid: herald.pid! }))
  }

  if (only === undefined || only === "pages") {
    results.push(await benchPages({ baseUrl: `http://127.0.0.1:${port}`, session, databaseUrl, timeScale: Number(oncallTimeScale), cli }))
  }

  if (profile !== undefined || nodeFlags.length > 0) {
    // A graceful stop, so profiles are written.
    await new Promise<void>((resolve) => {
      herald.once("exit", () => resolve())
      herald.kill("SIGTERM")
    })
  }
  console.log(results.every(Boolean) ? "\ntargets met" : "\nTARGETS MISSED")
}

main().then(() => process.exit(0), (error) => {
  console.error(error)
  process.exit(1)
})
