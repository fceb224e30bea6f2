/**
 * The prompts part of `npm run bench`, against a running Herald:
 *
 * 1. Round trip, idle: create a prompt, park a waiter on it, answer it with
 *    the Person API, and time until the waiter returns (p50/p99 over
 *    sequential runs), plus the wake latency (answer sent → wait returned).
 *    Target: round trip p99 < 50 ms.
 * 2. 2,000 concurrent waiters on one process: held (server memory per waiter
 *    printed), then released by answers; each release is timed from its
 *    answer. Target: every waiter released within 2 s of its answer.
 */
import { execFileSync } from "node:child_process"
import { fixed, summaryRow } from "./summary.ts"
import type { SummaryRow } from "./summary.ts"
import { json } from "./support.ts"

interface Context {
  readonly baseUrl: string
  readonly session: string
  readonly pid: number
}

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!

const ms = (n: number) => n.toFixed(1).padStart(8)

const rssKiB = (pid: number) => Number(execFileSync("ps", ["-o", "rss=", "-p", String(pid)], { encoding: "utf8" }).trim())

export const benchPrompts = async ({ baseUrl, pid, session }: Context): Promise<ReadonlyArray<SummaryRow>> => {
  const person = { authorization: `Bearer ${session}`, "content-type": "application/json" }
  const token = await json(await fetch(`${baseUrl}/api/app/tokens`, {
    method: "POST",
    headers: person,
    body: JSON.stringify({ name: "bench prompts", scopes: ["interactions:create", "interactions:read"] })
  }))
  const agent = { authorization: `Bearer ${token.secret}`, "content-type": "application/json" }
  const create = async () =>
    (await json(await fetch(`${baseUrl}/api/agent/interactions`, {
      method: "POST",
      headers: agent,
      body: JSON.stringify({ kind: "approval", title: "Deploy?", prompt: "v2 to production", expiresInSeconds: 3600 })
    }))).interaction.id as string
  const wait = async (id: string) => {
    const body = await json(await fetch(`${baseUrl}/api/agent/interactions/${id}/wait?timeout=60`, { headers: agent }))
    return { status: body.status as string, at: performance.now() }
  }
  const answer = async (id: string) => {
    await json(await fetch(`${baseUrl}/api/app/interactions/${id}/answer`, {
      method: "POST",
      headers: person,
      body: JSON.stringify({ status: "approved" })
    }))
    return performance.now()
  }

  // 1. Round trip, one at a time.
  const PAUSE = 10
  const roundTrips: Array<number> = []
  const wakes: Array<number> = []
  for (let i = 0; i < 220; i++) {
    const started = performance.now()
    const id = await create()
    const waiting = wait(id)
    await new Promise((r) => setTimeout(r, PAUSE)) // let the waiter park
    const answering = performance.now()
    await answer(id)
    const { at, status } = await waiting
    if (status !== "approved") throw new Error(`wait returned ${status}`)
    if (i >= 20) { // the first runs warm up the JIT and the pools
      roundTrips.push(at - started - PAUSE)
      wakes.push(at - answering)
    }
  }
  roundTrips.sort((a, b) => a - b)
  wakes.sort((a, b) => a - b)

  // 2. 2,000 waiters held, then released.
  const WAITERS = 2000
  const ids: Array<string> = []
  for (let i = 0; i < WAITERS; i += 50) ids.push(...await Promise.all(Array.from({ length: Math.min(50, WAITERS - i) }, create)))
  await new Promise((r) => setTimeout(r, 1000))
  const before = rssKiB(pid)
  const waits = ids.map((id) => wait(id))
  await new Promise((r) => setTimeout(r, 3000)) // all parked
  const held = rssKiB(pid)
  const answeredAt = new Map<string, number>()
  const answeringStarted = performance.now()
  for (let i = 0; i < ids.length; i += 50) {
    await Promise.all(ids.slice(i, i + 50).map(async (id) => answeredAt.set(id, await answer(id))))
  }
  const answeringTook = performance.now() - answeringStarted
  const returned = await Promise.all(waits)
  const releases = returned.map((r, i) => r.at - answeredAt.get(ids[i]!)!).sort((a, b) => a - b)
  const wrong = returned.filter((r) => r.status !== "approved").length
  const perWaiter = ((held - before) * 1024) / WAITERS

  console.log(`\nprompts — one at a time (${roundTrips.length} runs), then ${WAITERS} concurrent waiters\n`)
  console.log(`${"".padEnd(44)} ${"p50 ms".padStart(8)} ${"p99 ms".padStart(8)} ${"max ms".padStart(8)}`)
  console.log(`${"round trip create → answer → wait returns".padEnd(44)} ${ms(percentile(roundTrips, 0.5))} ${ms(percentile(roundTrips, 0.99))} ${ms(roundTrips.at(-1) ?? 0)}`)
  console.log(`${"wake: answer sent → wait returns".padEnd(44)} ${ms(percentile(wakes, 0.5))} ${ms(percentile(wakes, 0.99))} ${ms(wakes.at(-1) ?? 0)}`)
  console.log(`${`release of ${WAITERS} waiters after their answer`.padEnd(44)} ${ms(percentile(releases, 0.5))} ${ms(percentile(releases, 0.99))} ${ms(releases.at(-1) ?? 0)}`)
  console.log(`\n${WAITERS} waiters held: server RSS ${(before / 1024).toFixed(1)} → ${(held / 1024).toFixed(1)} MiB, ≈ ${(perWaiter / 1024).toFixed(1)} KiB per waiter; ${WAITERS} answers took ${(answeringTook / 1000).toFixed(1)} s; ${wrong} waiters saw another status`)
  const releasedInTime = (releases.at(-1) ?? Infinity) < 2000 && wrong === 0
  console.log(`target: round trip p99 < 50 ms (${percentile(roundTrips, 0.99).toFixed(1)}), ${WAITERS} waiters released within 2 s of their answers (max ${(releases.at(-1) ?? 0).toFixed(0)} ms)`)
  const p99 = percentile(roundTrips, 0.99)
  const slowest = releases.at(-1)
  return [
    summaryRow({ what: "prompt round trip p99 (create → answer → wait)", herald: `${p99.toFixed(1)} ms`, target: "< 50 ms", met: p99 < 50 }),
    summaryRow({
      what: `… ${WAITERS} waiters: slowest release after its answer`,
      herald: slowest === undefined ? "—" : `${fixed(slowest)} ms${wrong > 0 ? `, ${wrong} wrong` : ""}`,
      target: "< 2 s, none wrong",
      met: releasedInTime
    })
  ]
}
