/**
 * The live-activities part of `npm run bench`, against a running Herald:
 * 200 concurrent activities, each on its own two devices (an iPhone with its
 * update token, an Android phone), each receiving 10 routine updates a second
 * for 20 s (one in flight per activity; the load from a second process,
 * activity-load.ts). Printed: update requests per
 * second and their latency, provider-accepted updates per second, superseded
 * snapshots, the most operations queued at once, event-loop delay p99 (the
 * server's own /metrics), the server's and the database's CPU time per
 * update request, and memory per activity.
 * Target: the server keeps up (takes at least 90 % of the offered updates,
 * queued work never beyond one snapshot per device per activity) with
 * event-loop delay p99 under 50 ms.
 */
import pg from "pg"
import { cpuSeconds, cpuSecondsOf } from "./cpu.ts"
import { json, runJson } from "./support.ts"

interface Context {
  readonly baseUrl: string
  readonly session: string
  readonly databaseUrl: string
  /** The server's process, for its CPU time. */
  readonly pid: number
}

const ACTIVITIES = Number(process.env.BENCH_ACTIVITIES ?? 200)
const SECONDS = Number(process.env.BENCH_ACTIVITY_SECONDS ?? 20)
const RATE = 10

const inBatches = async <A>(n: number, size: number, f: (i: number) => Promise<A>) => {
  const out: Array<A> = []
  for (let i = 0; i < n; i += size) out.push(...await Promise.all(Array.from({ length: Math.min(size, n - i) }, (_, k) => f(i + k))))
  return out
}

const metric = (text: string, name: string) => {
  const line = text.split("\n").find((l) => l.startsWith(name))
  return line === undefined ? 0 : Number(line.split(" ").at(-1))
}


export const benchActivities = async ({ baseUrl, databaseUrl, pid, session }: Context): Promise<boolean> => {
  // One connection for the samples (a psql process a second would compete with the server for the CPU).
  const db = new pg.Client({ connectionString: databaseUrl })
  await db.connect()
  const person = { authorization: `Bearer ${session}`, "content-type": "application/json" }
  const token = await json(await fetch(`${baseUrl}/api/app/tokens`, {
    method: "POST",
    headers: person,
    body: JSON.stringify({ name: "bench activities", scopes: ["activities:write", "activities:read"] })
  }))
  const agent = { authorization: `Bearer ${token.secret}`, "content-type": "application/json" }
  const iphones = await inBatches(ACTIVITIES, 20, async (i) => {
    const device = await json(await fetch(`${baseUrl}/api/app/devices`, {
      method: "POST",
      headers: person,
      body: JSON.stringify({ platform: "ios", pushToken: `bench-la-ios-${i}`, liveActivitiesCapable: true })
    }))
    await json(await fetch(`${baseUrl}/api/app/devices/${device.id}/push-to-start-token`, {
      method: "PUT",
      headers: person,
      body: JSON.stringify({ token: `bench-la-pts-${i}` })
    }))
    return device.id as string
  })
  const pixels = await inBatches(ACTIVITIES, 20, async (i) =>
    (await json(await fetch(`${baseUrl}/api/app/devices`, {
      method: "POST",
      headers: person,
      body: JSON.stringify({ platform: "android", pushToken: `bench-la-android-${i}`, liveActivitiesCapable: true })
    }))).id as string)

  const before = await (await fetch(`${baseUrl}/metrics`)).text()
  const activities = await inBatches(ACTIVITIES, 20, async (i) => {
    const started = await json(await fetch(`${baseUrl}/api/agent/activities`, {
      method: "POST",
      headers: agent,
      body: JSON.stringify({ props: { title: `Job ${i}`, progress: 0 }, deviceIds: [iphones[i], pixels[i]] })
    }))
    const id = started.activity.id as string
    await json(await fetch(`${baseUrl}/api/app/activities/${id}/update-token`, {
      method: "POST",
      headers: person,
      body: JSON.stringify({ deviceId: iphones[i], token: `bench-la-update-${i}` })
    }))
    return id
  })

  // Sample the server's own event-loop delay and the queue depth while loading.
  const loopP99: Array<number> = []
  let maxQueued = 0
  const sampler = setInterval(async () => {
    const text = await (await fetch(`${baseUrl}/metrics`)).text()
    loopP99.push(metric(text, "herald_event_loop_delay_p99_seconds") * 1000)
    const queued = await db.query("SELECT count(*)::int AS n FROM live_activity_operations WHERE status IN ('queued', 'sending')")
    maxQueued = Math.max(maxQueued, queued.rows[0].n)
  }, 1000)

  // The database's share: its backends serving this database (the server's pool) over the load.
  const backends = (await db.query("SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"))
    .rows.map((r) => r.pid as number)
  const cpuBefore = { server: cpuSeconds(pid), database: cpuSecondsOf(backends) }
  const load = await runJson("activity-load.ts", [baseUrl, token.secret as string, String(SECONDS), String(RATE), ...activities])
  const loadSeconds = SECONDS
  const cpu = {
    server: cpuSeconds(pid) - cpuBefore.server,
    database: cpuSecondsOf(backends) - cpuBefore.database
  }
  clearInterval(sampler)
  await new Promise((r) => setTimeout(r, 2500)) // the last paced snapshots go out
  const after = await (await fetch(`${baseUrl}/metrics`)).text()

  const counts = await db.query(`
    SELECT count(*) FILTER (WHERE op = 'update' AND status = 'accepted')::int AS accepted,
           count(*) FILTER (WHERE status IN ('queued', 'sending'))::int AS queued
    FROM live_activity_operations`)
  await db.end()
  const { accepted, queued: stillQueued } = counts.rows[0] as { accepted: number; queued: number }
  // Replaced in place, a superseded snapshot leaves no row: the server counts them.
  const superseded = metric(after, "herald_live_activity_superseded_total") - metric(before, "herald_live_activity_superseded_total")
  const heapPerActivity = (metric(after, "herald_process_heap_used_bytes") - metric(before, "herald_process_heap_used_bytes")) / ACTIVITIES
  const worstLoop = Math.max(0, ...loopP99)
  const limit = ACTIVITIES * 2

  console.log(`\nlive activities — ${ACTIVITIES} activities × 2 devices, ${RATE} routine updates/s each for ${SECONDS} s\n`)
  const errors = load.non2xx + load.errors + load.timeouts
  console.log(`update requests: ${(load.total / loadSeconds).toFixed(0)}/s (offered ${ACTIVITIES * RATE}/s), p50 ${load.p50} ms, p99 ${load.p99} ms, ${errors} errors`)
  console.log(`CPU per update request: server ${(cpu.server * 1000 / load.total).toFixed(2)} ms (${(cpu.server / loadSeconds * 100).toFixed(0)} % of a core), ` +
    `PostgreSQL ${(cpu.database * 1000 / load.total).toFixed(2)} ms (${(cpu.database / loadSeconds * 100).toFixed(0)} % of a core; deliveries included)`)
  console.log(`device updates accepted by the provider: ${(accepted / loadSeconds).toFixed(0)}/s (${accepted} in all); superseded: ${superseded}`)
  console.log(`operations queued at once: at most ${maxQueued} (limit ${limit}: one snapshot per device per activity); ${stillQueued} left after the run`)
  console.log(`event-loop delay p99 (server, 1 s samples): worst ${worstLoop.toFixed(1)} ms; server heap growth over the run ≈ ${(heapPerActivity / 1024).toFixed(1)} KiB per activity (its actor and not yet collected garbage: GC timing shows)`)
  // Keeping up means taking the offered updates too, not only bounding the queue behind them.
  const taken = load.total / loadSeconds / (ACTIVITIES * RATE)
  const ok = maxQueued <= limit && stillQueued === 0 && worstLoop < 50 && errors === 0 && taken >= 0.9
  console.log(`target: queued ≤ ${limit} (${maxQueued}), event-loop p99 < 50 ms (${worstLoop.toFixed(1)}), ` +
    `≥ 90 % of the offered updates taken (${(taken * 100).toFixed(0)} %)`)
  return ok
}
