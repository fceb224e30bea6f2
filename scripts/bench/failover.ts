/**
 * The cluster part of `npm run bench` (issue 33): Herald as effect/cluster
 * runners on one PostgreSQL database, each `herald serve` with its own
 * `HERALD_RUNNER_ADDRESS`. `npm run bench -- --failover` runs it alone.
 *
 * 1. Failover, over three runners: the time from a runner's kill -9 to its due
 *    timers firing on the runners left. Each round makes 60 prompts through
 *    all three (their actors, and so their stored expiry timers, on every
 *    runner's shards) due half a second after the planned kill, kills one
 *    runner (SIGKILL), and reads when each prompt expired: the commit of its
 *    expiry's own transaction (the withdrawal of its alert, `push_receipts`,
 *    on the database's clock, set against the bench's). The live runners'
 *    timers fire within their poll interval; the dead runner's wait for its
 *    shards to move, and fire together: the figure is kill → the first of
 *    them (and the last), the worst round's. The killed runner is started
 *    again between rounds. `BENCH_FAILOVER_ROUNDS` (default 3; `0` leaves
 *    the failover out, for profiling the forwarding alone).
 * 2. Forwarding: the CPU per notification and per live-activity update with
 *    the same load spread over two runners against one runner (each on a
 *    fresh database): every server process's CPU plus their PostgreSQL
 *    backends', per answered request (forwarding.ts).
 */
import pg from "pg"
import { forwardingRows } from "./forwarding.ts"
import { freshDatabase } from "./herald.ts"
import { quick } from "./mode.ts"
import { restartRunner, settled, startRunners, stopRunners } from "./runners.ts"
import type { Runner } from "./runners.ts"
import { fixed, printSummary, summaryRow } from "./summary.ts"
import type { SummaryRow } from "./summary.ts"
import { json } from "./support.ts"

const ROUNDS = Number(process.env.BENCH_FAILOVER_ROUNDS ?? (quick ? 1 : 3))
const PROMPTS = 60
/** A prompt is due this long after the kill: after the death, so only the dead runner's wait on it. */
const DUE_AFTER_KILL_MS = 500
/** Timers fired later than this after their due time wait for a dead runner's shards (a live runner polls every ~0.5 s). */
const LATE_MS = 1500
const BOUND_S = 15

const sleep = (millis: number) => new Promise((r) => setTimeout(r, Math.max(0, millis)))

/** The database clock minus this process's, in ms (the midpoint of a round trip). */
const clockOffset = async (db: pg.Pool) => {
  const before = Date.now()
  const { rows } = await db.query("SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now")
  return Number(rows[0].now) - (before + Date.now()) / 2
}

interface Round {
  readonly victim: string
  /** ms after the kill at which each prompt expired, ascending. */
  readonly afterKill: ReadonlyArray<number>
  /** Whether the cluster's gauges showed it settled before the kill. */
  readonly settled: boolean
}

/** One round: prompts due just after the kill of `victim`; when each expired. */
const round = async (db: pg.Pool, runners: ReadonlyArray<Runner>, victim: Runner, token: string): Promise<Round> => {
  const wasSettled = await settled(runners)
  const ids: Array<string> = []
  for (let i = 0; i < PROMPTS; i += 10) {
    ids.push(...await Promise.all(Array.from({ length: Math.min(10, PROMPTS - i) }, async (_, k) => {
      const created = await json(await fetch(`${runners[(i + k) % runners.length]!.herald.baseUrl}/api/agent/interactions`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ kind: "yes_no", title: `Failover ${i + k}`, prompt: "p", expiresInSeconds: 60 })
      }))
      return created.interaction.id as string
    })))
  }
  const killAt = Date.now() + 1000
  const due = killAt + DUE_AFTER_KILL_MS
  // As if made with these deadlines (the API's shortest is a minute): the rows and their stored timers.
  await db.query("UPDATE interactions SET expires_at = to_timestamp($1::float8 / 1000) WHERE id = ANY($2)", [due, ids])
  await db.query("UPDATE cluster_messages SET deliver_at = $1 WHERE entity_type = 'Prompt' AND entity_id = ANY($2)", [due, ids])
  await sleep(killAt - Date.now())
  const killedAt = Date.now()
  victim.herald.child.kill("SIGKILL")
  const deadline = killedAt + 60_000
  const expired = async () =>
    Number((await db.query("SELECT count(*)::int AS n FROM interactions WHERE id = ANY($1) AND status = 'expired'", [ids])).rows[0].n)
  while ((await expired()) < ids.length && Date.now() < deadline) await sleep(100)
  const offset = await clockOffset(db)
  const { rows } = await db.query(
    `SELECT (extract(epoch FROM min(created_at)) * 1000)::float8 AS at FROM push_receipts
     WHERE purpose = 'withdraw' AND item_id = ANY($1) GROUP BY item_id`,
    [ids]
  )
  const afterKill = rows.map((r) => Number(r.at) - offset - killedAt).sort((a, b) => a - b)
  // Those never expired count as the whole wait.
  while (afterKill.length < ids.length) afterKill.push(Date.now() - killedAt)
  return { victim: victim.label, afterKill, settled: wasSettled }
}

const secondsOf = (ms: number) => `${(ms / 1000).toFixed(2)} s`

/** The failover rounds over three runners on a fresh database; the summary row. */
const benchFailoverTime = async (): Promise<SummaryRow> => {
  const databaseUrl = freshDatabase("herald_bench_failover")
  const runners = await startRunners(databaseUrl, 3, "failover")
  const db = new pg.Pool({ connectionString: databaseUrl, max: 1, idleTimeoutMillis: 0 })
  try {
    const first = runners[0]!.herald
    first.cli("admin", "user", "create", "--email", "failover@example.test", "--name", "Failover")
    const session = first.cli("admin", "session", "create", "--user", "failover@example.test").token as string
    const person = { authorization: `Bearer ${session}`, "content-type": "application/json" }
    // A phone, so each prompt's alert goes out and its expiry withdraws it (the expiry's commit time).
    await json(await fetch(`${first.baseUrl}/api/app/devices`, {
      method: "POST",
      headers: person,
      body: JSON.stringify({ platform: "ios", deviceName: "bench phone", pushToken: "bench-failover-phone" })
    }))
    const { secret } = await json(await fetch(`${first.baseUrl}/api/app/tokens`, {
      method: "POST",
      headers: person,
      body: JSON.stringify({ name: "bench failover", scopes: ["interactions:create", "interactions:read"] })
    }))
    const rounds: Array<Round> = []
    for (let r = 0; r < ROUNDS; r++) {
      const victim = runners[r % runners.length]!
      rounds.push(await round(db, runners, victim, secret as string))
      await restartRunner(victim, databaseUrl)
    }
    console.log(`\nfailover — 3 runners, ${PROMPTS} prompt expiries due ${DUE_AFTER_KILL_MS} ms after one runner's kill -9, ${ROUNDS} round(s)\n`)
    const figures = rounds.map((r) => {
      const late = r.afterKill.filter((ms) => ms > DUE_AFTER_KILL_MS + LATE_MS)
      const onTime = r.afterKill.filter((ms) => ms <= DUE_AFTER_KILL_MS + LATE_MS)
      // The dead runner's timers: the late ones; none late means its shards moved within the live runners' poll.
      const first = late[0] ?? r.afterKill.at(-1)!
      const last = r.afterKill.at(-1)!
      console.log(`killed ${r.victim}: its ${late.length} of ${r.afterKill.length} timers fired ${secondsOf(first)}–${secondsOf(last)} after the kill; ` +
        `the live runners' ${onTime.length} by ${secondsOf(onTime.at(-1) ?? 0)}` + (r.settled ? "" : " (the cluster had not settled before the kill)"))
      return { first, last }
    })
    const worstFirst = Math.max(...figures.map((f) => f.first))
    const worstLast = Math.max(...figures.map((f) => f.last))
    console.log(`kill -9 → the dead runner's first due timer fires: ${secondsOf(worstFirst)} (worst round); every due timer fired by ${secondsOf(worstLast)}`)
    return summaryRow({
      what: "failover: kill -9 → dead runner's first due timer",
      herald: `${secondsOf(worstFirst)} (all by ${secondsOf(worstLast)})`,
      target: `< ${BOUND_S} s`,
      met: worstLast < BOUND_S * 1000
    })
  } finally {
    await db.end()
    await stopRunners(runners)
  }
}

/** The cluster part: failover, then forwarding's CPU ratios. */
export const benchFailover = async (): Promise<ReadonlyArray<SummaryRow>> =>
  [...(ROUNDS > 0 ? [await benchFailoverTime()] : []), ...await forwardingRows()]

/** `npm run bench -- --failover`: the cluster part alone, with its summary. */
export const failoverAlone = async () => {
  const began = performance.now()
  const rows = await benchFailover()
  printSummary(rows, [`the cluster part took ${fixed((performance.now() - began) / 1000)} s`])
}
