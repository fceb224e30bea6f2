/**
 * What the per-token rate limits kept in PostgreSQL cost (docs/limits.md,
 * "Across nodes"): `node scripts/bench/rate-limits.ts` on the machine's
 * PostgreSQL (BENCH_DATABASE_URL / TEST_DATABASE_URL as `npm run bench`).
 *
 * 1. The take statement alone (billing/RateLimitRepo.ts) through the server's
 *    own pool: 1,000 takes one after another on one key, 1,000 on distinct
 *    keys, and 1,000 from 32 fibers at once on one key (its row lock is the
 *    contention of one token's concurrent requests) and on 32 keys; then the
 *    same 32 at once through the limiter, whose concurrent takes share a
 *    statement (SharedRateLimits.ts).
 * 2. `herald serve` with the per-token limits off (as every other bench runs)
 *    and on (so high that nothing is refused, so every request takes its
 *    units), in turn, twice: GET /api/agent/auth/status and POST
 *    /api/agent/notifications (3 sandbox devices), requests a second, p99,
 *    and the CPU per request of the server and of its database backends.
 *    `--statement` runs part 1 alone.
 */
import { Duration, Effect, Layer, Redacted } from "effect"
import { RateLimitRepo } from "../../packages/server/src/billing/RateLimitRepo.ts"
import { makeSharedRateLimiter } from "../../packages/server/src/billing/SharedRateLimits.ts"
import { postgresLayer } from "../../packages/server/src/db/Database.ts"
import { MigrationsLayer } from "../../packages/server/src/db/Migrations.ts"
import { cpuPer, cpuSince } from "./cpu.ts"
import { benchPerson, freshDatabase, startHerald } from "./herald.ts"
import type { Herald } from "./herald.ts"
import { CONNECTIONS, DURATION, WARMUP } from "./mode.ts"
import { notificationsLoad } from "./notifications.ts"
import { json, load, psql, refuseErrors, stop } from "./support.ts"
import type { Request } from "./support.ts"

const TAKES = 1_000

const percentile = (sorted: ReadonlyArray<number>, p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!

/** One take of one request for `key` (a budget of a million a minute: every take is taken, the common case). */
type Taker = (key: string) => Effect.Effect<unknown>

/** `n` takes, `concurrency` at a time, on `keys` keys in turn: mean, p50 and p99 of one take, and takes a second. */
const timeTakes = (takeOne: Taker, label: string, keys: number, concurrency: number) =>
  Effect.gen(function*() {
    const prefix = `${label}-${Date.now()}`
    const times: Array<number> = []
    const one = (i: number) =>
      Effect.suspend(() => {
        const started = performance.now()
        return Effect.map(takeOne(`${prefix}-${i % keys}`), () => void times.push((performance.now() - started) * 1000))
      })
    const began = performance.now()
    yield* Effect.forEach(Array.from({ length: TAKES }, (_, i) => i), one, { concurrency, discard: true })
    const seconds = (performance.now() - began) / 1000
    const sorted = times.sort((x, y) => x - y)
    const mean = sorted.reduce((s, t) => s + t, 0) / sorted.length
    return `${label.padEnd(48)} mean ${mean.toFixed(0).padStart(5)} µs   p50 ${percentile(sorted, 0.5).toFixed(0).padStart(5)} µs   ` +
      `p99 ${percentile(sorted, 0.99).toFixed(0).padStart(5)} µs   ${(TAKES / seconds).toFixed(0).padStart(6)} takes/s`
  })

const statementPart = (databaseUrl: string) =>
  Effect.gen(function*() {
    const repo = yield* RateLimitRepo
    const statement: Taker = (key) =>
      repo.take({ key, now: Date.now(), requests: 1, requestsInterval: 0.06, sends: 0, sendsInterval: 0 }, 60_000)
    // Through the limiter: concurrent takes share a statement (SharedRateLimits.ts).
    const limiter = makeSharedRateLimiter({ requestsPerMinute: 1_000_000, sendsPerMinute: 0 }, repo)
    const limited: Taker = (key) => limiter.take(key, false, Date.now())
    // Warm the pool and the prepared statements.
    yield* timeTakes(statement, "warm-up", 1, 1)
    yield* timeTakes(limited, "warm-up", 32, 32)
    return [
      yield* timeTakes(statement, "statement, one after another, one key", 1, 1),
      yield* timeTakes(statement, "statement, one after another, distinct keys", TAKES, 1),
      yield* timeTakes(statement, "statement, 32 at once, one key (its row lock)", 1, 32),
      yield* timeTakes(statement, "statement, 32 at once, 32 keys", 32, 32),
      yield* timeTakes(limited, "limiter, 32 at once, one key (batched)", 1, 32),
      yield* timeTakes(limited, "limiter, 32 at once, 32 keys (batched)", 32, 32)
    ]
  }).pipe(
    Effect.provide(RateLimitRepo.layer.pipe(Layer.provideMerge(MigrationsLayer), Layer.provideMerge(postgresLayer(Redacted.make(databaseUrl), 10)))),
    Effect.timeout(Duration.minutes(2))
  )

const databaseUrl = freshDatabase("herald_bench_limits")
console.log(`rate limits in PostgreSQL — ${TAKES} takes each, through a pool of 10\n`)
for (const line of await Effect.runPromise(statementPart(databaseUrl))) console.log(line)
if (process.argv.includes("--statement")) process.exit(0)

const backendsOf = () =>
  psql(databaseUrl, `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'herald'`)
    .trim().split("\n").filter(Boolean).map(Number)

interface Loads {
  readonly status: Request
  readonly post: Request
}

/** The bench's person, a token for GET /auth/status, and the notifications load's account (3 devices), made once. */
const setUp = async (server: Herald): Promise<Loads> => {
  const person = benchPerson(server)
  const token = await json(await fetch(`${server.baseUrl}/api/app/tokens`, {
    method: "POST",
    headers: { authorization: `Bearer ${person}`, "content-type": "application/json" },
    body: JSON.stringify({ name: "limits bench", scopes: [] })
  }))
  const { post } = await notificationsLoad(server.port, person)
  return { status: { headers: { authorization: `Bearer ${token.secret}` } }, post }
}

/** One server with the limits `on` or off: each load warmed, then measured with the CPU it took per request. */
const measure = async (on: boolean, loads: Loads | undefined) => {
  const limits = on ? { HERALD_RATE_LIMIT_PER_MINUTE: "100000000", HERALD_SEND_LIMIT_PER_MINUTE: "100000000" } : {}
  const server = await startHerald(databaseUrl, { env: limits })
  const ready = loads ?? await setUp(server)
  const base = `http://127.0.0.1:${server.port}/api/agent`
  const rows: Array<string> = []
  for (const [name, url, request] of [["GET /auth/status", `${base}/auth/status`, ready.status], ["POST /notifications", `${base}/notifications`, ready.post]] as const) {
    await load(url, request, WARMUP)
    const database = await cpuSince(backendsOf)
    const { cpuMs, result } = await cpuPer(server.child.pid!, () => load(url, request), (r) => r.total)
    refuseErrors(name, result)
    const dbMs = ((await database()) * 1000) / Math.max(1, result.total)
    rows.push(`${`${name}, limits ${on ? "on " : "off"}`.padEnd(34)} ${result.requestsPerSecond.toFixed(0).padStart(6)} req/s   ` +
      `p50 ${result.p50.toFixed(1).padStart(5)} ms   p99 ${result.p99.toFixed(1).padStart(5)} ms   ` +
      `CPU/request: server ${(cpuMs * 1000).toFixed(0).padStart(4)} µs, database ${(dbMs * 1000).toFixed(0).padStart(4)} µs`)
  }
  await stop(server.child)
  return { rows, loads: ready }
}

console.log(`\nherald serve, ${CONNECTIONS} connections, ${DURATION} s each, limits off and on in turn\n`)
let loads: Loads | undefined
for (const on of [false, true, false, true]) {
  const measured = await measure(on, loads)
  loads = measured.loads
  for (const line of measured.rows) console.log(line)
}
process.exit(0)
