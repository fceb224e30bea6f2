/**
 * The soak (issue 31): does Herald's rate hold as its tables grow? One server
 * on a fresh PostgreSQL database, the notifications bench's account and load
 * (3 sandbox devices, 50 connections posting the same body, rate limits off),
 * held for 10 minutes (`--quick`: 2) after the bench's warm-up, in one
 * continuous load (soak-load.ts) that reports each minute alone. At each
 * minute's end: notifications/s, p50/p99, errors, the outbox backlog, and
 * every table the run has written to (found from PostgreSQL's own write
 * counters, so a table a later change adds shows up by itself) with its
 * live and dead tuples and total size: whether the cost per
 * notification grows, and with what.
 *
 * `--seeded`: first a history of a million receipts (soak-seed.ts,
 * `SOAK_SEED_ROWS`), then the server restarted on it, as after an upgrade:
 * what a long-lived database does to the same load.
 *
 * Targets: the last minute's rate within 20 % of the first's; no minute's
 * p99 above 500 ms. `SOAK_MINUTE_SECONDS` shortens the "minute" for trying the
 * bench itself (its figures are then no measurement).
 *
 *   npm run bench -- --soak [--quick] [--seeded]     node scripts/bench/soak.ts [--quick] [--seeded]
 */
import { spawn } from "node:child_process"
import { availableParallelism, loadavg } from "node:os"
import * as path from "node:path"
import { createInterface } from "node:readline"
import { benchPerson, freshDatabase, startHerald } from "./herald.ts"
import { CONNECTIONS, quick, seeded, SOAK_MINUTES, WARMUP } from "./mode.ts"
import { notificationsLoad } from "./notifications.ts"
import { seed } from "./soak-seed.ts"
import { fixed, printSummary, summaryRow } from "./summary.ts"
import type { SummaryRow } from "./summary.ts"
import { json, load, psql, stop, track } from "./support.ts"
import type { Request } from "./support.ts"

const MINUTE_SECONDS = Number(process.env.SOAK_MINUTE_SECONDS ?? 60)
const SEED_ROWS = Number(process.env.SOAK_SEED_ROWS ?? 1_000_000)
/** `SOAK_SEED_VACUUM=0`: no VACUUM (ANALYZE) after the seed (soak-seed.ts says why there is one). */
const SEED_VACUUM = process.env.SOAK_SEED_VACUUM !== "0"
/** The targets (issue 31). */
const RATE_DRIFT = 0.2
const P99_LIMIT_MS = 500

/** What soak-load.ts prints for each window. */
interface Minute {
  readonly window: number
  readonly requestsPerSecond: number
  readonly p50: number
  readonly p99: number
  readonly max: number
  readonly total: number
  readonly non2xx: number
  readonly errors: number
  readonly timeouts: number
}

interface Table {
  readonly name: string
  readonly live: number
  readonly dead: number
  readonly bytes: number
  /** Inserts + updates + deletes since the statistics began: which tables the run writes. */
  readonly writes: number
}

/**
 * Every user table: the statistics' live and dead tuples (they count without autovacuum or ANALYZE) and
 * its size. No `count(*)`: an exact count scans the whole history every minute, seconds at 3M receipts,
 * and the instrument would then slow what it measures more with every minute.
 */
const tables = (databaseUrl: string): Array<Table> =>
  psql(databaseUrl, `
    SELECT relname, n_live_tup, n_dead_tup, pg_total_relation_size(relid), n_tup_ins + n_tup_upd + n_tup_del
    FROM pg_stat_user_tables`).trim().split("\n").map((line) => {
    const [name, live, dead, bytes, writes] = line.split("|")
    return { name: name!, live: Number(live), dead: Number(dead), bytes: Number(bytes), writes: Number(writes) }
  })

/** The outbox's backlog from its queue (migration 0015): rows waiting, and rows claimed (at a provider). */
const backlog = (databaseUrl: string) => {
  const [pending, sending] = psql(databaseUrl, `
    SELECT count(*) FILTER (WHERE claimed_by IS NULL), count(*) FILTER (WHERE claimed_by IS NOT NULL) FROM push_queue`)
    .trim().split("|").map(Number)
  return { pending: pending!, sending: sending! }
}

/** The notification path's tables first, then the rest the run wrote, by name. */
const order = ["push_receipts", "notifications", "inbox_items", "activity_feed", "push_sandbox_deliveries"]
const rank = (name: string) => (order.includes(name) ? order.indexOf(name) : order.length)
const megabytes = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MB`

/** One continuous load of `minutes` windows (soak-load.ts); `onMinute` runs as each window ends. */
const soakLoad = (url: string, request: Request, minutes: number, onMinute: (m: Minute) => void) =>
  new Promise<void>((resolve, reject) => {
    const child = track(spawn(process.execPath, [
      path.join(import.meta.dirname, "soak-load.ts"), url, String(minutes), String(MINUTE_SECONDS), String(CONNECTIONS), JSON.stringify(request)
    ], { stdio: ["ignore", "pipe", "inherit"] }))
    let done = false
    createInterface({ input: child.stdout }).on("line", (line) => {
      const minute = JSON.parse(line) as Minute
      onMinute(minute)
      // The load runs on until the last minute's tables are read (soak-load.ts).
      if (minute.window === minutes) {
        done = true
        child.kill("SIGTERM")
      }
    })
    child.on("close", (code) => (done ? resolve() : reject(new Error(`soak-load.ts exited ${code} before its last minute`))))
  })

/** Sends one notification and waits (bounded) until its pushes have left the queue; its id. */
const sendOne = async (url: string, request: Request, databaseUrl: string) => {
  const sent = await json(await fetch(url, { method: "POST", headers: request.headers ?? {}, body: request.body ?? "" }))
  const id = sent.notification.id as string
  const deadline = Date.now() + 30_000
  const queued = () => Number(psql(databaseUrl, `SELECT count(*) FROM push_receipts WHERE item_id = '${id}' AND status IN ('pending', 'sending')`))
  while (queued() > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100))
  return id
}

export const benchSoak = async ({ minutes, seeded }: { minutes: number; seeded: boolean }): Promise<ReadonlyArray<SummaryRow>> => {
  const label = seeded ? `seeded ${fixed(SEED_ROWS)}` : "fresh db"
  const databaseUrl = freshDatabase("herald_soak")
  let server = await startHerald(databaseUrl)
  let started = performance.now()
  const session = benchPerson(server)
  const { notificationsUrl, post } = await notificationsLoad(server.port, session)
  console.log(`\nsoak (${label}) — POST /api/agent/notifications, 3 sandbox devices, ${CONNECTIONS} connections, ` +
    `${minutes} × ${MINUTE_SECONDS} s on one server after a ${WARMUP} s warm-up; ` +
    `PostgreSQL autovacuum ${psql(databaseUrl, "SHOW autovacuum").trim()}`)
  if (MINUTE_SECONDS !== 60) console.log(`SOAK_MINUTE_SECONDS=${MINUTE_SECONDS}: each "minute" below is ${MINUTE_SECONDS} s (a trial of the bench, not a measurement)`)

  if (seeded) {
    // The seed copies what the server wrote for one real notification (soak-seed.ts), then the server
    // restarts on the history, as it would after an upgrade: nothing cached from before it.
    const templateId = await sendOne(notificationsUrl, post, databaseUrl)
    await stop(server.child)
    const took = seed(databaseUrl, templateId, SEED_ROWS, { vacuum: SEED_VACUUM })
    const [receipts, size] = psql(databaseUrl, "SELECT count(*), pg_total_relation_size('push_receipts') FROM push_receipts").trim().split("|")
    console.log(`seeded ${fixed(Number(receipts))} receipts (${megabytes(Number(size))}) with their notifications, inbox copies and feed entries: ` +
      `INSERT … SELECT ${took.insert.toFixed(1)} s, ` +
      `${took.vacuum === undefined ? "no VACUUM (ANALYZE) (SOAK_SEED_VACUUM=0)" : `VACUUM (ANALYZE) ${took.vacuum.toFixed(1)} s`}, ` +
      `CHECKPOINT ${took.checkpoint.toFixed(1)} s; server restarted on it`)
    server = await startHerald(databaseUrl, { port: server.port })
    started = performance.now()
  }

  // Tables whose write counters move from the warm-up's end on are the ones the load writes. An idle
  // backend reports its counts up to 10 s late (PostgreSQL's PGSTAT_IDLE_INTERVAL): the server's start-up
  // writes (migrations) are waited for, or they would read as the load's.
  const settled = started + 11_000 - performance.now()
  if (settled > 0) await new Promise((r) => setTimeout(r, settled))
  await load(notificationsUrl, post, WARMUP)
  const before = new Map(tables(databaseUrl).map((t) => [t.name, t.writes]))
  const written = new Set<string>()
  const results: Array<Minute> = []
  console.log(`\n${"minute".padStart(6)} ${"notif/s".padStart(8)} ${"p50 ms".padStart(7)} ${"p99 ms".padStart(7)} ${"max ms".padStart(7)} ` +
    `${"errors".padStart(7)}   outbox at the minute's end`)
  await soakLoad(notificationsUrl, post, minutes, (m) => {
    results.push(m)
    const { pending, sending } = backlog(databaseUrl)
    const errors = m.non2xx + m.errors
    console.log(`${String(m.window).padStart(6)} ${fixed(m.requestsPerSecond).padStart(8)} ${String(m.p50).padStart(7)} ${String(m.p99).padStart(7)} ` +
      `${String(m.max).padStart(7)} ${String(errors).padStart(7)}   ${fixed(pending)} pending, ${fixed(sending)} sending`)
    const now = tables(databaseUrl)
    for (const t of now) if (t.writes > (before.get(t.name) ?? 0)) written.add(t.name)
    const shown = now.filter((t) => written.has(t.name)).sort((a, b) => rank(a.name) - rank(b.name) || a.name.localeCompare(b.name))
    for (const t of shown) {
      console.log(`${"".padStart(8)}${t.name.padEnd(26)} ${fixed(t.live).padStart(11)} live ` +
        `${fixed(t.dead).padStart(10)} dead ${megabytes(t.bytes).padStart(10)}`)
    }
  })
  await stop(server.child)

  const first = results[0]!
  const last = results.at(-1)!
  const ratio = last.requestsPerSecond / Math.max(1e-9, first.requestsPerSecond)
  const worst = results.reduce((a, b) => (b.p99 > a.p99 ? b : a))
  const errors = results.reduce((n, m) => n + m.non2xx + m.errors, 0)
  return [
    summaryRow({
      what: `soak, ${label}: last minute's notif/s / first's`,
      herald: `${fixed(last.requestsPerSecond)} / ${fixed(first.requestsPerSecond)}`,
      // Three decimals: 0.7996 is a miss, which two would print as 0.80.
      ratio: ratio.toFixed(3),
      target: `ratio ${(1 - RATE_DRIFT).toFixed(2)}–${(1 + RATE_DRIFT).toFixed(2)}`,
      met: Math.abs(ratio - 1) <= RATE_DRIFT
    }),
    summaryRow({
      what: `… highest minute's p99`,
      herald: `${worst.p99} ms (minute ${worst.window})`,
      target: `≤ ${P99_LIMIT_MS} ms`,
      met: worst.p99 <= P99_LIMIT_MS
    }),
    summaryRow({ what: "… errors (non-2xx, socket)", herald: fixed(errors), target: "(information)", met: undefined })
  ]
}

/** `npm run bench -- --soak [--quick] [--seeded]` and `node scripts/bench/soak.ts`: the soak alone, its summary. */
export const soakAlone = async () => {
  const began = performance.now()
  const loadAtStart = loadavg()[0]!.toFixed(1)
  const rows = await benchSoak({ minutes: SOAK_MINUTES, seeded })
  printSummary(rows, [
    `the soak took ${((performance.now() - began) / 1000).toFixed(0)} s; load average ${loadAtStart} at the start, ` +
    `${loadavg()[0]!.toFixed(1)} at the end (${availableParallelism()} cores)${quick ? "; --quick: 2 minutes (full: 10)" : ""}`
  ])
}

if (import.meta.main) {
  for (const arg of process.argv.slice(2)) {
    if (arg !== "--quick" && arg !== "--seeded") {
      console.error(`soak.ts: unknown argument ${arg} (options: --quick, --seeded)`)
      process.exit(2)
    }
  }
  process.on("SIGINT", () => process.exit(130))
  soakAlone().then(() => process.exit(0), (error) => {
    console.error(error)
    process.exit(1)
  })
}
