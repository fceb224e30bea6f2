/**
 * The notifications part of `npm run bench`, against a running Herald:
 * `POST /api/agent/notifications` to an account with 3 sandbox devices, 50
 * connections, next to the floor on Herald's stack doing the least work the
 * durable outbox asks for (bare HttpApi + sql-pg, notifications-effect-floor.ts,
 * floor-sql.ts), with the CPU time per notification of each server and of its
 * PostgreSQL backends. The full run adds a raw node:http JSON echo, a raw `pg`
 * single-row INSERT loop and the same floor in raw node:http + raw pg
 * (notifications-floor.ts). Then, once the queue has drained, each push's lag
 * from enqueue to the sandbox accepting it. Targets (issue 22): rate ≥ 0.80 of
 * the floor's, p99 ≤ 1.5 × the floor's.
 */
import { spawn } from "node:child_process"
import * as path from "node:path"
import { cpuPer, cpuSince } from "./cpu.ts"
import { CONNECTIONS, DURATION, floorProfileFlags, profileDir, quick, WARMUP } from "./mode.ts"
import { fixed, ratioOf, summaryRow } from "./summary.ts"
import type { SummaryRow } from "./summary.ts"
import { header, load, portOf, psql, refuseErrors, row, runJson, stop, track } from "./support.ts"
import type { LoadResult, Request } from "./support.ts"

interface Context {
  readonly port: number
  readonly session: string
  readonly databaseUrl: string
  /** The server's process, for its CPU time. */
  readonly pid: number
  /** The raw node:http baseline (a JSON echo for POST). */
  readonly rawUrl: string
}

/**
 * The account the notifications load sends to (3 sandbox devices) and the load itself: its URL and
 * request (a sender token, the same body). The soak (soak.ts) holds this same load.
 */
export const notificationsLoad = async (port: number, session: string) => {
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
  return { notificationsUrl, post }
}

export const benchNotifications = async ({ databaseUrl, pid, port, rawUrl, session }: Context): Promise<ReadonlyArray<SummaryRow>> => {
  const { notificationsUrl, post } = await notificationsLoad(port, session)
  const echo: Request = { method: "POST", headers: { "content-type": "application/json" }, body: post.body! }

  // The floors: the least work the durable outbox asks for (floor-sql.ts), in raw node:http + raw pg
  // (notifications-floor.ts) and on Herald's stack, bare HttpApi + sql-pg (notifications-effect-floor.ts).
  // Each is loaded alone, then stopped; CPU is read from its process and its database backends.
  const backendsOf = (application: string) =>
    psql(databaseUrl, `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = '${application}'`)
      .trim().split("\n").filter(Boolean).map(Number)
  const floorPost: Request = { ...post, headers: { ...post.headers, authorization: "Bearer floor-token" } }
  const measureFloor = async (script: string, application: string) => {
    const flags = floorProfileFlags(script.replace(/\.ts$/, ""))
    const server = track(spawn(process.execPath, [...flags, path.join(import.meta.dirname, script), databaseUrl, "0"], { stdio: ["ignore", "pipe", "inherit"] }))
    const url = `http://127.0.0.1:${await portOf(server)}/notifications`
    await load(url, floorPost, WARMUP)
    const databaseSince = await cpuSince(() => backendsOf(application))
    const { cpuMs, result } = await cpuPer(server.pid!, () => load(url, floorPost), (r) => r.total)
    refuseErrors(script, result)
    const dbMs = ((await databaseSince()) * 1000) / Math.max(1, result.total)
    // Gone before the next measurement starts (killed outright if it lingers; a profile takes longer to write).
    await stop(server, profileDir === undefined ? 5 : 60)
    return { result, cpuMs, dbMs }
  }

  if (!quick) await load(rawUrl, echo, WARMUP)
  await load(notificationsUrl, post, WARMUP)
  const echoResult = quick ? undefined : await load(rawUrl, echo)
  const pgResult = quick ? undefined : await runJson("raw-pg.ts", [databaseUrl, String(DURATION), String(CONNECTIONS)])
  const rawFloor = quick ? undefined : await measureFloor("notifications-floor.ts", "herald-floor")
  const effectFloor = await measureFloor("notifications-effect-floor.ts", "herald-effect-floor")
  psql(databaseUrl, "TRUNCATE push_sandbox_deliveries")
  const since = psql(databaseUrl, "SELECT now()").trim()
  // The database's share: the backends serving this database (the server's pool), measured over the same load.
  const databaseSince = await cpuSince(() => backendsOf("herald"))
  const { cpuMs: sendCpu, result: sendResult } = await cpuPer(pid, () => load(notificationsUrl, post), (r) => r.total)
  const dbCpu = ((await databaseSince()) * 1000) / Math.max(1, sendResult.total)
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

  const floor = effectFloor.result
  console.log(`\nnotifications — 3 sandbox devices, ${CONNECTIONS} connections, ${DURATION} s each\n`)
  header()
  const rowIf = (name: string, r: LoadResult | undefined, unit?: string) => r !== undefined && console.log(row(name, r, unit))
  rowIf("raw node:http (JSON echo)", echoResult)
  rowIf("raw pg single-row INSERT loop", pgResult, "rows/s")
  rowIf("floor: durable pushes, raw node:http + pg", rawFloor?.result)
  console.log(row("floor: durable pushes, bare HttpApi + sql-pg", floor))
  console.log(row("herald POST /api/agent/notifications", sendResult))
  const rate = sendResult.requestsPerSecond
  if (echoResult !== undefined && pgResult !== undefined && rawFloor !== undefined) {
    console.log(`\nratio herald/raw http: ${ratioOf(rate, echoResult.requestsPerSecond)}   herald/raw pg insert: ${ratioOf(rate, pgResult.requestsPerSecond)}`)
    console.log(`ratio herald/raw floor: ${ratioOf(rate, rawFloor.result.requestsPerSecond)}`)
  }
  console.log(`ratio herald/HttpApi floor: ${ratioOf(rate, floor.requestsPerSecond)} (target ≥ 0.80); ` +
    `p99 ${sendResult.p99} ms against the floor's ${floor.p99} ms (target ≤ 1.5 ×)`)
  console.log(`pushes: ${accepted} accepted, ${notAccepted} not accepted; enqueue → sandbox lag p50 ${lagP50} ms, p99 ${lagP99} ms; ${late} later than 2 s`)
  const cpu = (name: string, server: number, db: number) => `${name} ${server.toFixed(3)} + PostgreSQL ${db.toFixed(3)} ms`
  console.log(`CPU per notification (its pushes included): ${cpu("herald", sendCpu, dbCpu)}; ` +
    `${rawFloor === undefined ? "" : `${cpu("raw floor", rawFloor.cpuMs, rawFloor.dbMs)}; `}${cpu("HttpApi floor", effectFloor.cpuMs, effectFloor.dbMs)}`)
  if (reasons !== "") console.log(`not accepted: ${reasons.split("\n").join(", ")}`)

  const cpuCell = (server: number, db: number) => `${server.toFixed(2)} + ${db.toFixed(2)} ms`
  return [
    summaryRow({
      what: "POST /notifications, 3 devices, req/s",
      herald: fixed(rate),
      floor: fixed(floor.requestsPerSecond),
      ratio: ratioOf(rate, floor.requestsPerSecond),
      target: "ratio ≥ 0.80",
      met: rate >= 0.8 * floor.requestsPerSecond
    }),
    summaryRow({
      what: "… p99 latency",
      herald: `${sendResult.p99} ms`,
      floor: `${floor.p99} ms`,
      ratio: ratioOf(sendResult.p99, floor.p99),
      target: "ratio ≤ 1.5",
      met: sendResult.p99 <= 1.5 * floor.p99
    }),
    summaryRow({
      what: "… CPU per notification, server + PostgreSQL",
      herald: cpuCell(sendCpu, dbCpu),
      floor: cpuCell(effectFloor.cpuMs, effectFloor.dbMs),
      ratio: ratioOf(sendCpu + dbCpu, effectFloor.cpuMs + effectFloor.dbMs),
      target: "(information)",
      met: undefined
    })
  ]
}
