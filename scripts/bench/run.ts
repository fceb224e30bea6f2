/**
 * `npm run bench`: Herald on PostgreSQL next to the floors its stack sets,
 * measured in the same run with the same load (50 connections from a second
 * process), ending with one summary of issue 22's targets (summary.ts):
 *
 * 0. Start-up (startup.ts, first, before the bench's servers): `herald serve`
 *    → first 200 on /readyz on a fresh PostgreSQL database (< 2 s), a fresh
 *    embedded data directory and its restart (< 4 s); `herald admin user
 *    create` beside the embedded server and `herald --help` (< 2 s).
 * 1. `GET /api/agent/auth/status` with a valid token vs the framework floor: a
 *    bare Effect HttpApi server answering the same record (effect-floor.ts).
 *    Target: ratio ≥ 0.90. Also measured: raw node:http with a fixed body.
 * 2. `POST /api/agent/notifications` to an account with 3 sandbox devices vs the
 *    floor doing the least work the durable outbox asks for on bare HttpApi +
 *    sql-pg (notifications.ts). Targets: ratio ≥ 0.80, p99 ≤ 1.5 × the floor's.
 * 3. Prompts (prompts.ts, run first while the server is idle): create → answer → wait round trip
 *    (target p99 < 50 ms idle) and 2,000 concurrent waiters held then released
 *    (target: each within 2 s of its answer), with server memory per waiter.
 * 4. Live activities (activities.ts): 200 activities × 2 devices, 5 routine updates/s each
 *    (1,000/s) for 20 s, vs the floor. Targets: ≥ 980/s answered, p99 < 50 ms, event-loop p99 < 50 ms,
 *    no queue growth.
 * 5. Pages (pages.ts): 500 pages in 10 s to one on-call group with a 1-minute escalation;
 *    page creation p50/p99 and each escalation step's lag behind its due time (target p99 < 1 s).
 *    `BENCH_ONCALL_TIME_SCALE` (default 1: the minute is waited for) is the server's `HERALD_ONCALL_TIME_SCALE`.
 * 6. Cluster (failover.ts, issue 33), on runners of its own: three runners, one killed -9 as prompts fall due
 *    (kill → its due timers fire on the others; target < 15 s), and the CPU per notification and per live-activity
 *    update with the load spread over two runners against one (forwarding.ts; ratio ≤ 1.3 or a profile).
 *    `--failover` runs it alone.
 * 6b. Push fan-out (fanout.ts, issue 36), on servers and a database of its own: 100,000 pushes queued paused, then
 *    drained through the APNs and FCM providers against loopback fakes, beside apns2 + firebase-admin in a plain
 *    loop. Targets: drain rate ≥ 0.80 of the floor's, peak RSS bounded, none lost or sent twice. Not with `--quick`.
 * 7. Soak (soak.ts, issue 31), last and on its own server and fresh database: the notifications load held
 *    2 minutes, each minute's rate, p99 and table sizes. Targets: the last minute's rate within 20 % of the
 *    first's, no minute's p99 above 500 ms. `--soak` runs it alone for 10 minutes (`--soak --quick`: 2),
 *    `--seeded` on a million seeded receipts after a restart.
 *
 * `--quick` (mode.ts): the summary's rows in under 2 minutes; prompts, pages, the cluster part, the soak and the raw
 * baselines left out.
 * 8. The test suite (suite.ts, issue 36): `npm test` on the embedded database with a fresh clone's caches, last
 *    (target ≤ 240 s); never with `--quick`.
 *
 * `BENCH_ONLY=startup|auth|notifications|prompts|activities|pages|failover|fanout|suite` runs one part; `BENCH_PROFILE=<dir>`
 * writes a CPU profile of the server there and of each floor under `<dir>/floor-<name>/`;
 * `BENCH_NODE_FLAGS` passes Node.js flags to the server (`--trace-gc`, `--heap-prof`). The exit code is 0
 * whatever the targets (it is a report), 1 if the run broke.
 *
 * Database: BENCH_DATABASE_URL, else TEST_DATABASE_URL, else the local
 * server at postgres://postgres@127.0.0.1:5432/postgres; a fresh database is
 * created on it and dropped afterwards.
 */
import { spawn } from "node:child_process"
import { availableParallelism, loadavg } from "node:os"
import * as path from "node:path"
import { benchActivities } from "./activities.ts"
import { cpuPer } from "./cpu.ts"
import { benchFailover, failoverAlone } from "./failover.ts"
import { benchFanout } from "./fanout.ts"
import { adminUrl, benchPerson, freshDatabase, startHerald } from "./herald.ts"
import { CONNECTIONS, DURATION, failoverOnly, floorProfileFlags, FULL_RUN_SOAK_MINUTES, profileDir, quick, quickSkips, soakOnly, WARMUP } from "./mode.ts"
import { benchNotifications } from "./notifications.ts"
import { benchPages } from "./pages.ts"
import { benchPrompts } from "./prompts.ts"
import { benchSoak, soakAlone } from "./soak.ts"
import { benchStartup } from "./startup.ts"
import { benchSuite } from "./suite.ts"
import { fixed, printSummary, ratioOf, summaryRow } from "./summary.ts"
import type { SummaryRow } from "./summary.ts"
import { header, load, portOf, refuseErrors, row, stop, track } from "./support.ts"

const node = process.execPath

for (const arg of process.argv.slice(2)) {
  if (arg !== "--quick" && arg !== "--soak" && arg !== "--seeded" && arg !== "--failover") {
    console.error(`npm run bench: unknown argument ${arg} (options: --quick, --soak, --seeded, --failover)`)
    process.exit(2)
  }
}

process.on("SIGINT", () => process.exit(130))

const only = process.env.BENCH_ONLY
const runs = (part: string) => only === undefined || only === part
/** The server's on-call time scale for the pages part: 1 waits the real minute of escalation. */
const oncallTimeScale = process.env.BENCH_ONCALL_TIME_SCALE ?? "1"

const laps: Array<string> = []
/** The machine's load average (1 min): the run's noise, said under the summary. */
const load1 = () => loadavg()[0]!.toFixed(1)
const loadAtStart = load1()

const main = async () => {
  if (soakOnly) return soakAlone()
  if (failoverOnly) return failoverAlone()
  const began = performance.now()
  const summary: Array<SummaryRow> = []
  /** The other parts' own targets (not issue 22's), said under the summary. */
  const others: Array<string> = []
  if (quick) console.log(`npm run bench --quick: ${quickSkips.join("; ")}`)
  // Where the run's time goes, said under the summary (quick's budget is 2 minutes).
  let mark = began
  const lap = (part: string) => {
    const now = performance.now()
    laps.push(`${part} ${((now - mark) / 1000).toFixed(0)} s`)
    mark = now
  }

  // Start-up first: nothing of the bench's own runs beside it.
  // Its rows go last in the summary, as in the table.
  const startup = runs("startup") ? await benchStartup(adminUrl) : []
  if (runs("startup")) lap("start-up")
  if (only === "startup") return finish(startup, others, began)
  if (only === "suite") return finish(await benchSuite(), others, began)

  // A fresh database for this run (herald.ts).
  const databaseUrl = freshDatabase()

  // Raw node:http baseline.
  const raw = track(spawn(node, [path.join(import.meta.dirname, "raw-server.ts"), "0"], { stdio: ["ignore", "pipe", "inherit"] }))
  const rawPort = await portOf(raw)
  // The framework floor: a bare Effect HttpApi server answering the same record (effect-floor.ts).
  const floor = track(spawn(node, [...(runs("auth") ? floorProfileFlags("auth") : []), path.join(import.meta.dirname, "effect-floor.ts"), "0"], { stdio: ["ignore", "pipe", "inherit"] }))
  const floorPort = await portOf(floor)

  // Herald on PostgreSQL, with the rate limits off (herald.ts).
  // BENCH_PROFILE=<dir>: a V8 CPU profile of the server (and of each floor, mode.ts), written when the run ends.
  // BENCH_NODE_FLAGS: more Node.js flags for the server (`--trace-gc`, `--heap-prof`, …).
  const nodeFlags = process.env.BENCH_NODE_FLAGS?.split(" ").filter(Boolean) ?? []
  const server = await startHerald(databaseUrl, {
    env: { HERALD_ONCALL_TIME_SCALE: oncallTimeScale },
    nodeFlags: [...(profileDir !== undefined ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : []), ...nodeFlags]
  })
  const { child: herald, cli, port } = server
  const session = benchPerson(server)
  const created = await fetch(`http://127.0.0.1:${port}/api/app/tokens`, {
    method: "POST",
    headers: { authorization: `Bearer ${session}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "bench", scopes: [] })
  }).then((r) => r.json()) as { secret: string }
  const authorization = `Bearer ${created.secret}`
  const rawUrl = `http://127.0.0.1:${rawPort}/`
  lap("set-up")

  // Prompts first, while the server is idle (the target is an idle round trip).
  if (runs("prompts") && !quick) {
    summary.push(...await benchPrompts({ baseUrl: `http://127.0.0.1:${port}`, session, pid: herald.pid! }))
    lap("prompts")
  }

  if (runs("auth")) {
    const heraldUrl = `http://127.0.0.1:${port}/api/agent/auth/status`
    const check = await fetch(heraldUrl, { headers: { authorization } })
    if (check.status !== 200) throw new Error(`auth/status answered ${check.status}`)
    // Warm each (JIT, connection pools), then measure each in turn.
    const floorUrl = `http://127.0.0.1:${floorPort}/status`
    if (!quick) await load(rawUrl, {}, WARMUP)
    await load(floorUrl, {}, WARMUP)
    await load(heraldUrl, { headers: { authorization } }, WARMUP)
    const rawResult = quick ? undefined : await load(rawUrl)
    const { cpuMs: floorCpu, result: floorResult } = await cpuPer(floor.pid!, () => load(floorUrl), (r) => r.total)
    const { cpuMs: authCpu, result: heraldResult } = await cpuPer(herald.pid!, () => load(heraldUrl, { headers: { authorization } }), (r) => r.total)
    refuseErrors("auth/status", heraldResult)
    const rate = heraldResult.requestsPerSecond
    const ratio = rate / floorResult.requestsPerSecond
    console.log(`
auth status — ${CONNECTIONS} connections, ${DURATION} s each, load from a second process
`)
    header()
    if (rawResult !== undefined) console.log(row("raw node:http (fixed JSON)", rawResult))
    console.log(row("bare Effect HttpApi (same record, no middleware)", floorResult))
    console.log(row("herald GET /api/agent/auth/status", heraldResult))
    console.log(`
ratio herald/bare Effect HttpApi: ${ratio.toFixed(2)} (target ≥ 0.60, p99 < 25 ms)`)
    if (rawResult !== undefined) {
      console.log(`ratio herald/raw: ${ratioOf(rate, rawResult.requestsPerSecond)}   ` +
        `bare Effect HttpApi/raw: ${ratioOf(floorResult.requestsPerSecond, rawResult.requestsPerSecond)}`)
    }
    console.log(`server CPU per request: herald ${authCpu.toFixed(3)} ms, bare Effect HttpApi ${floorCpu.toFixed(3)} ms`)
    summary.push(
      summaryRow({
        what: "GET /auth/status req/s",
        herald: fixed(rate),
        floor: fixed(floorResult.requestsPerSecond),
        ratio: ratio.toFixed(2),
        target: "ratio ≥ 0.60",
        met: ratio >= 0.6
      }),
      summaryRow({
        what: "… p99 latency",
        herald: `${heraldResult.p99} ms`,
        floor: `${floorResult.p99} ms`,
        target: "< 25 ms",
        met: heraldResult.p99 < 25
      }),
      summaryRow({
        what: "… CPU per request",
        herald: `${authCpu.toFixed(3)} ms`,
        floor: `${floorCpu.toFixed(3)} ms`,
        ratio: ratioOf(authCpu, floorCpu),
        target: "(information)",
        met: undefined
      })
    )
    lap("auth status")
  }

  if (runs("notifications")) {
    summary.push(...await benchNotifications({ port, session, databaseUrl, pid: herald.pid!, rawUrl }))
    lap("notifications")
  }

  if (runs("activities")) {
    summary.push(...await benchActivities({ baseUrl: `http://127.0.0.1:${port}`, session, databaseUrl, pid: herald.pid! }))
    lap("live activities")
  }

  if (runs("pages") && !quick) {
    const met = await benchPages({ baseUrl: `http://127.0.0.1:${port}`, session, databaseUrl, timeScale: Number(oncallTimeScale), cli })
    others.push(`pages (each escalated once, none early, lag p99 < 1 s): ${met ? "met" : "MISSED"}`)
    lap("pages")
  }

  // A graceful stop, so profiles are written; and before the cluster part and the soak, which have their own
  // servers and databases (and measure CPU: nothing else of the bench's should run beside them).
  const soaks = runs("soak") && !quick
  const failovers = runs("failover") && !quick
  const fanouts = runs("fanout") && !quick
  if (soaks || failovers || fanouts || profileDir !== undefined || nodeFlags.length > 0) await Promise.all([stop(herald, 60), stop(floor, 60)])
  if (failovers) {
    summary.push(...await benchFailover())
    lap("cluster")
  }
  // Push fan-out (fanout.ts, issue 36): 100,000 pushes drained through the APNs and FCM providers against fakes,
  // on servers and a database of its own, beside apns2 + firebase-admin in a plain loop.
  if (fanouts) {
    summary.push(...await benchFanout())
    lap("push fan-out")
  }
  // Last, the 2-minute soak (soak.ts): whether the rate holds as the tables grow, which no 10 s load shows.
  if (soaks) {
    summary.push(...await benchSoak({ minutes: FULL_RUN_SOAK_MINUTES, seeded: false }))
    lap("soak")
  }
  // The test suite last of all (suite.ts): minutes of both cores, nothing else running.
  if (runs("suite") && !quick) {
    summary.push(...await benchSuite())
    lap("npm test")
  }
  finish([...summary, ...startup], others, began)
}

const finish = (summary: ReadonlyArray<SummaryRow>, others: ReadonlyArray<string>, began: number) =>
  printSummary(summary, [
    ...others,
    ...(quick ? [`quick run: ${quickSkips.join("; ")}`] : []),
    `the run took ${((performance.now() - began) / 1000).toFixed(0)} s (${laps.join(", ")}); load average ${loadAtStart} at the start, ${load1()} at the end (${availableParallelism()} cores)`
  ])

main().then(() => process.exit(0), (error) => {
  console.error(error)
  process.exit(1)
})
