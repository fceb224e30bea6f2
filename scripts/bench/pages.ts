/**
 * The page-storm part of `npm run bench`, against a running Herald: a family
 * of three, each with a sandbox phone, and one on-call group over them whose
 * escalation pages the `next` person after one minute. 500 pages arrive in
 * 10 s (one every 20 ms, each its own page: no dedup key), open loop: a page
 * is sent on its schedule whether or not earlier ones were answered.
 *
 * Printed: page creation latency (p50/p99/max, client side) and the lag of
 * each page's escalation step behind its due time: `notified[].at` of step 1
 * against the page's `createdAt` + `afterMinutes` × the server's
 * `HERALD_ONCALL_TIME_SCALE` (read from the stored rows, the same values
 * `GET /pages/{id}` shows, at full precision). Target: every page escalated,
 * lag p99 under 1 s.
 *
 * The time scale is the server's (`BENCH_ONCALL_TIME_SCALE`, default 1: the
 * real minute is waited for, so the 500 steps come due at the same 50 a
 * second the pages arrived at, with no creation load beside them). A scale of
 * `0.1` runs the steps 6 s after their pages, while the storm is still
 * arriving.
 */
import pg from "pg"
import { json } from "./support.ts"

interface Context {
  readonly baseUrl: string
  /** The bench person's Person API session. */
  readonly session: string
  readonly databaseUrl: string
  /** The server's `HERALD_ONCALL_TIME_SCALE`. */
  readonly timeScale: number
  /** `herald <args…>` on the bench's database, its JSON output. */
  readonly cli: (...args: Array<string>) => any
}

const PAGES = Number(process.env.BENCH_PAGES ?? 500)
const STORM_SECONDS = 10
const AFTER_MINUTES = 1

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!
const ms = (n: number) => n.toFixed(1).padStart(8)
const sleep = (millis: number) => new Promise((r) => setTimeout(r, Math.max(0, millis)))

export const benchPages = async ({ baseUrl, cli, databaseUrl, session, timeScale }: Context): Promise<boolean> => {
  const post = async (path: string, authorization: string, body: unknown) =>
    json(await fetch(`${baseUrl}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${authorization}`, "content-type": "application/json" },
      body: JSON.stringify(body)
    }))

  // The family: the bench person (who pages) and two more, each with a phone.
  const me = await json(await fetch(`${baseUrl}/api/app/me`, { headers: { authorization: `Bearer ${session}` } }))
  const token = await post("/api/app/tokens", session, {
    name: "bench pages",
    scopes: ["teams:read", "teams:write", "oncall:read", "oncall:write"]
  })
  const agent = token.secret as string
  const family = await post("/api/agent/teams", agent, { kind: "family", name: "Bench on-call" })
  const people: Array<{ id: string; session: string }> = [{ id: me.id as string, session }]
  for (const name of ["pager-bob", "pager-cid"]) {
    const person = cli("admin", "user", "create", "--email", `${name}@example.test`, "--name", name)
    const personSession = cli("admin", "session", "create", "--user", person.id).token as string
    const invite = await post(`/api/agent/teams/${family.id}/invites`, agent, { email: `${name}@example.test` })
    await post("/api/app/invites/accept", personSession, { code: invite.code })
    people.push({ id: person.id, session: personSession })
  }
  for (const [i, person] of people.entries()) {
    await post("/api/app/devices", person.session, { platform: "ios", deviceName: `pager ${i}`, pushToken: `bench-pager-${i}` })
  }
  // The second person's shift runs from a minute ago to the next handoff, at least 11 hours away.
  const handoffHour = new Date(Date.now() + 12 * 3_600_000).getUTCHours()
  const group = await post(`/api/agent/teams/${family.id}/oncall`, agent, {
    name: "Bench storm",
    rotation: {
      members: [people[1]!.id, people[2]!.id, people[0]!.id],
      period: "daily",
      handoffAt: `${String(handoffHour).padStart(2, "0")}:00`,
      timezone: "UTC",
      startsAt: new Date(Date.now() - 60_000).toISOString()
    },
    escalation: [{ afterMinutes: AFTER_MINUTES, target: "next" }]
  })

  // The storm: one page every 20 ms, open loop.
  const interval = (STORM_SECONDS * 1000) / PAGES
  const created: Array<Promise<{ id: string; took: number; ok: boolean }>> = []
  const started = performance.now()
  for (let i = 0; i < PAGES; i++) {
    await sleep(started + i * interval - performance.now())
    const sent = performance.now()
    created.push(fetch(`${baseUrl}/api/agent/oncall/${group.id}/pages`, {
      method: "POST",
      headers: { authorization: `Bearer ${agent}`, "content-type": "application/json" },
      body: JSON.stringify({ title: `Storm page ${i}`, body: "Disk 93% full on db-1." })
    }).then(async (r) => {
      const body = await r.json() as { page?: { id: string } }
      return { id: body.page?.id ?? "", took: performance.now() - sent, ok: r.status === 201 }
    }))
  }
  const sentOver = (performance.now() - started) / 1000
  const answers = await Promise.all(created)
  const lastAnswer = (performance.now() - started) / 1000
  const failed = answers.filter((a) => !a.ok).length
  const creation = answers.filter((a) => a.ok).map((a) => a.took).sort((a, b) => a - b)
  const ids = answers.filter((a) => a.ok).map((a) => a.id)

  // Wait for every step (bounded: 30 s past the last one's due time), then read the lag of each.
  const db = new pg.Client({ connectionString: databaseUrl })
  await db.connect()
  try {
    const dueMs = AFTER_MINUTES * 60_000 * timeScale
    const waitUntil = Date.now() + dueMs + 30_000
    const escalated = async () =>
      (await db.query("SELECT count(DISTINCT page_id)::int AS n FROM page_notified WHERE step = 1 AND page_id = ANY($1)", [ids])).rows[0].n as number
    let done = await escalated()
    while (done < ids.length && Date.now() < waitUntil) {
      await sleep(250)
      done = await escalated()
    }
    const lags = (await db.query(
      `SELECT extract(epoch FROM n.at - (p.created_at + make_interval(secs => $2::float8 / 1000))) * 1000 AS lag
       FROM pages p JOIN page_notified n ON n.page_id = p.id AND n.step = 1
       WHERE p.id = ANY($1)`,
      [ids, dueMs]
    )).rows.map((r) => Number(r.lag)).sort((a, b) => a - b)
    const perPage = (await db.query(
      "SELECT count(*)::int AS n FROM page_notified WHERE step = 1 AND page_id = ANY($1) GROUP BY page_id HAVING count(*) > 1",
      [ids]
    )).rowCount ?? 0
    // The same rows as the API shows them, for one page.
    const sample = ids[0] === undefined ? undefined : await json(await fetch(`${baseUrl}/api/agent/pages/${ids[0]}`, {
      headers: { authorization: `Bearer ${agent}` }
    }))
    const sampleSteps = (sample?.notified as Array<{ step: number }> | undefined)?.map((n) => n.step).join(",") ?? "none"

    const scaleText = timeScale === 1
      ? "time scale 1: the real minute, waited for"
      : `HERALD_ONCALL_TIME_SCALE ${timeScale}: a minute of escalation is ${(dueMs / 1000).toFixed(1)} s`
    console.log(`\npages — ${PAGES} pages in ${STORM_SECONDS} s to one group (3 people), escalation to \`next\` after ${AFTER_MINUTES} minute; ${scaleText}\n`)
    console.log(`${"".padEnd(44)} ${"p50 ms".padStart(8)} ${"p99 ms".padStart(8)} ${"max ms".padStart(8)}`)
    console.log(`${"page creation (POST /oncall/{id}/pages)".padEnd(44)} ${ms(percentile(creation, 0.5))} ${ms(percentile(creation, 0.99))} ${ms(creation.at(-1) ?? 0)}`)
    console.log(`${"escalation step behind its due time".padEnd(44)} ${ms(percentile(lags, 0.5))} ${ms(percentile(lags, 0.99))} ${ms(lags.at(-1) ?? 0)}`)
    console.log(`\nsent over ${sentOver.toFixed(1)} s, last answer at ${lastAnswer.toFixed(1)} s; ${ids.length} created, ${failed} refused; ${lags.length} of ${ids.length} escalated, ` +
      `${perPage} more than once, earliest ${(lags[0] ?? 0).toFixed(0)} ms from due; one page's notified steps: ${sampleSteps}`)
    const ok = failed === 0 && lags.length === PAGES && perPage === 0 && (lags[0] ?? 0) >= 0 && percentile(lags, 0.99) < 1000
    console.log(`target: every page escalated once (${lags.length}/${PAGES}), not early, step lag p99 < 1000 ms (${percentile(lags, 0.99).toFixed(0)})`)
    return ok
  } finally {
    await db.end()
  }
}
