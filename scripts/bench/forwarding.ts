/**
 * What forwarding costs (issue 33; part of the cluster part, failover.ts): the
 * same loads against one runner and spread over two, each on a fresh
 * database, and the CPU each costs per answered request: every server
 * process's (/proc), held to the bound as the ratio two/one (forwarding is
 * the servers' work), and their PostgreSQL backends', said beside it.
 *
 * - Notifications: the notifications part's request (3 sandbox devices), the
 *   `CONNECTIONS` connections split evenly over the runners, `DURATION` s
 *   after a `WARMUP` s warm-up.
 * - Live-activity updates: 100 activities (5 on each of 20 Android phones),
 *   5 routine updates a second each, every runner sending each activity its
 *   share: an activity's actor lives on one runner, so with two runners half
 *   of its updates are forwarded to the other. `ACTIVITY_SECONDS` after
 *   `ACTIVITY_WARMUP`.
 *
 * Above 1.3 × the overhead asks for a profile: `BENCH_PROFILE=<dir>` writes
 * each runner's to `<dir>/cluster-forward<n>-<i>/` (runners.ts).
 */
import pg from "pg"
import { cpuSeconds, cpuSince } from "./cpu.ts"
import { benchPerson, freshDatabase } from "./herald.ts"
import { ACTIVITY_SECONDS, ACTIVITY_WARMUP, CONNECTIONS, DURATION, profileDir, WARMUP } from "./mode.ts"
import { notificationsLoad } from "./notifications.ts"
import { settled, startRunners, stopRunners } from "./runners.ts"
import type { Runner } from "./runners.ts"
import { fixed, ratioOf, summaryRow } from "./summary.ts"
import type { SummaryRow } from "./summary.ts"
import { json, refuseErrors, runJson } from "./support.ts"
import type { LoadResult } from "./support.ts"

const PHONES = 20
const PER_PHONE = 5
const RATE = 5
/** The overhead past which a profile is asked for (issue 33). */
const PROFILE_ABOVE = 1.3

interface Cost {
  /** Answered requests a second, all runners together. */
  readonly rate: number
  /** CPU ms per answered request: the servers', their PostgreSQL backends'. */
  readonly server: number
  readonly database: number
  readonly errors: number
}

/** Every runner's CPU seconds so far, and their database backends' from now (cpu.ts). */
const meter = async (runners: ReadonlyArray<Runner>, db: pg.Pool) => {
  const server = () => runners.reduce((sum, r) => sum + cpuSeconds(r.herald.child.pid!), 0)
  const backends = async () =>
    (await db.query("SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'herald'")).rows.map((r) => r.pid as number)
  const serverFrom = server()
  const databaseSince = await cpuSince(backends)
  return async () => ({ server: server() - serverFrom, database: await databaseSince() })
}

const costOf = (results: ReadonlyArray<LoadResult>, seconds: number, cpu: { server: number; database: number }): Cost => {
  const total = Math.max(1, results.reduce((sum, r) => sum + r.total, 0))
  return {
    rate: total / seconds,
    server: (cpu.server * 1000) / total,
    database: (cpu.database * 1000) / total,
    errors: results.reduce((sum, r) => sum + r.non2xx + r.errors + r.timeouts, 0)
  }
}

const post = (url: string, authorization: string, body: unknown) =>
  fetch(url, { method: "POST", headers: { authorization: `Bearer ${authorization}`, "content-type": "application/json" }, body: JSON.stringify(body) })
    .then(json)

/** Both loads against `n` runners on a fresh database. */
const measure = async (n: number) => {
  const databaseUrl = freshDatabase(`herald_bench_forward${n}`)
  const runners = await startRunners(databaseUrl, n, `forward${n}`)
  const db = new pg.Pool({ connectionString: databaseUrl, max: 1, idleTimeoutMillis: 0 })
  try {
    await settled(runners)
    const first = runners[0]!.herald
    const session = benchPerson(first)

    // Notifications, the connections split over the runners.
    const { notificationsUrl, post: request } = await notificationsLoad(first.port, session)
    const path = new URL(notificationsUrl).pathname
    const connections = String(Math.max(1, Math.floor(CONNECTIONS / n)))
    const spread = (seconds: number) =>
      Promise.all(runners.map((r) => runJson("load.ts", [`${r.herald.baseUrl}${path}`, String(seconds), connections, JSON.stringify(request)])))
    await spread(WARMUP)
    const notificationsCpu = await meter(runners, db)
    const sent = await spread(DURATION)
    for (const r of sent) refuseErrors("notifications (forwarding)", r)
    const notifications = costOf(sent, DURATION, await notificationsCpu())

    // Live activities: every runner sends every activity its share of the rate.
    const { secret } = await post(`${first.baseUrl}/api/app/tokens`, session, { name: "bench forwarding", scopes: ["activities:write", "activities:read"] })
    const phones: Array<string> = []
    for (let i = 0; i < PHONES; i++) {
      const device = await post(`${first.baseUrl}/api/app/devices`, session, { platform: "android", pushToken: `bench-forward-${i}`, liveActivitiesCapable: true })
      phones.push(device.id as string)
    }
    const ids = await Promise.all(Array.from({ length: PHONES * PER_PHONE }, async (_, i) => {
      const started = await post(`${runners[i % n]!.herald.baseUrl}/api/agent/activities`, secret as string, {
        props: { title: `Job ${i}`, progress: 0 },
        deviceIds: [phones[Math.floor(i / PER_PHONE)]]
      })
      return started.activity.id as string
    }))
    const measuring: { cpu?: Promise<() => Promise<{ server: number; database: number }>> } = {}
    const updated = await Promise.all(runners.map((r) =>
      runJson("activity-load.ts", [r.herald.baseUrl, secret as string, String(ACTIVITY_WARMUP), String(ACTIVITY_SECONDS), String(RATE / n), ...ids], () => {
        // Each load prints `measuring` at the same moment (the same warm-up): the first one starts the meter.
        measuring.cpu ??= meter(runners, db)
      })))
    if (measuring.cpu === undefined) throw new Error("activity-load.ts never started measuring")
    const updates = costOf(updated, ACTIVITY_SECONDS, await (await measuring.cpu)())
    return { notifications, updates }
  } finally {
    await db.end()
    await stopRunners(runners)
  }
}

/** The servers' CPU per request, with their PostgreSQL backends' after it. */
const perRequest = (c: Cost) => `${c.server.toFixed(2)} ms (+ PostgreSQL ${c.database.toFixed(2)})`

export const forwardingRows = async (): Promise<ReadonlyArray<SummaryRow>> => {
  const one = await measure(1)
  const two = await measure(2)
  console.log(`\nforwarding — the same load on one runner and spread over two (each on a fresh database)\n`)
  // Forwarding is the servers' work (a second HTTP decode and the hop between runners): their CPU is what is
  // held to the bound; the database's, which forwarding does not change, is said beside it.
  const line = (what: string, a: Cost, b: Cost) => {
    const ratio = b.server / a.server
    console.log(`${what}: one runner ${fixed(a.rate)}/s, CPU ${a.server.toFixed(2)} + PostgreSQL ${a.database.toFixed(2)} ms, ${a.errors} errors; ` +
      `two runners ${fixed(b.rate)}/s, CPU ${b.server.toFixed(2)} + PostgreSQL ${b.database.toFixed(2)} ms, ${b.errors} errors; ` +
      `ratio two/one: servers ${ratio.toFixed(2)}, with PostgreSQL ${ratioOf(b.server + b.database, a.server + a.database)}`)
    if (ratio > PROFILE_ABOVE) {
      console.log(profileDir === undefined
        ? `  above ${PROFILE_ABOVE} ×: BENCH_PROFILE=<dir> npm run bench -- --failover writes each runner's CPU profile (<dir>/cluster-forward2-*)`
        : `  above ${PROFILE_ABOVE} ×: the runners' CPU profiles are in ${profileDir}/cluster-forward1-* and cluster-forward2-*`)
    }
    return ratio
  }
  const notificationRatio = line("notifications", one.notifications, two.notifications)
  const updateRatio = line(`live-activity updates (${PHONES * PER_PHONE} activities × ${RATE}/s)`, one.updates, two.updates)
  return [
    summaryRow({
      what: "CPU per notification, 2 runners (1 runner in floor)",
      herald: perRequest(two.notifications),
      floor: perRequest(one.notifications),
      ratio: notificationRatio.toFixed(2),
      target: `ratio ≤ ${PROFILE_ABOVE} (else profile)`,
      met: notificationRatio <= PROFILE_ABOVE
    }),
    summaryRow({
      what: "CPU per live-activity update, 2 runners (1 in floor)",
      herald: perRequest(two.updates),
      floor: perRequest(one.updates),
      ratio: updateRatio.toFixed(2),
      target: `ratio ≤ ${PROFILE_ABOVE} (else profile)`,
      met: updateRatio <= PROFILE_ABOVE && two.updates.errors === 0
    })
  ]
}
