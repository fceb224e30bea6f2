/**
 * The live-activities load, run in its own process (like load.ts): each
 * activity on its own keep-alive connection, sent PATCH /activities/{id} with
 * a routine progress update every 1/rate s, each activity at its own phase
 * (agents do not update in step), one request in flight: an update due while
 * the previous one is still unanswered goes as soon as it is answered.
 * Latency is counted from when each update was due, so a slow server cannot
 * hide its queue by delaying the load (coordinated omission).
 * autocannon's per-connection rate is no substitute: it sends each second's
 * quota back to back at the top of the second, all connections at once.
 * The warm-up is the same load on the same connections: when it ends the
 * process prints `measuring`, and the updates answered from then on until the
 * end are counted (each with its latency from when it was due), so what is
 * measured is a steady load, not a change of load processes. Counting only
 * the updates *due* in the window would hide the answers a server gives to a
 * backlog left by the warm-up: a server that fell behind by more than the
 * window would read as answering nothing while it answered all it could.
 * argv: baseUrl token warmupSeconds seconds rate activityId…; results as JSON
 * (loadReport.ts's shape).
 */
import { Agent, request } from "node:http"

const [baseUrl, token, warmup, seconds, rate, ...ids] = process.argv.slice(2)
const url = new URL(baseUrl!)
const interval = 1000 / Number(rate)
const total = Number(rate) * (Number(warmup) + Number(seconds))
const TIMEOUT_MS = 10_000

const latencies: Array<number> = []
let non2xx = 0
let errors = 0
let timeouts = 0

/** Whether the update was taken (a 2xx answer); failures are counted when `counted`. */
const send = (agent: Agent, id: string, n: number, counted: boolean) =>
  new Promise<boolean>((resolve) => {
    const body = JSON.stringify({ props: { progress: Math.min(1, n / total), status: `step ${n}` } })
    const req = request({
      agent,
      host: url.hostname,
      port: url.port,
      method: "PATCH",
      path: `/api/agent/activities/${id}`,
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json", "content-length": Buffer.byteLength(body) },
      timeout: TIMEOUT_MS
    }, (res) => {
      const ok = res.statusCode !== undefined && res.statusCode >= 200 && res.statusCode <= 299
      if (!ok && counted) non2xx++
      res.resume()
      res.on("end", () => resolve(ok))
      res.on("error", () => {
        if (!timedOut && counted) errors++
        resolve(false)
      })
    })
    let timedOut = false
    req.on("timeout", () => {
      timedOut = true
      if (counted) timeouts++
      req.destroy()
    })
    req.on("error", () => {
      if (!timedOut && counted) errors++
      resolve(false)
    })
    req.end(body)
  })

const sleepUntil = (at: number) => new Promise((r) => setTimeout(r, Math.max(0, at - performance.now())))

const start = performance.now() + 50
const measureFrom = start + Number(warmup) * 1000
const end = measureFrom + Number(seconds) * 1000
setTimeout(() => process.stdout.write("measuring\n"), measureFrom - performance.now())
await Promise.all(ids.map(async (id, i) => {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 })
  // Phases spread evenly over one interval.
  let due = start + (interval * i) / ids.length
  // Until the end: what a slow server did not take by then was not taken.
  for (let n = 1; due < end && performance.now() < end; n++, due += interval) {
    await sleepUntil(due)
    // Updates answered while measuring count (in the rate and the latencies); failures of those sent while measuring, apart.
    const taken = await send(agent, id, n, performance.now() >= measureFrom)
    const answeredAt = performance.now()
    if (taken && answeredAt >= measureFrom && answeredAt <= end) latencies.push(answeredAt - due)
  }
  agent.destroy()
}))

latencies.sort((a, b) => a - b)
const at = (q: number) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? 0)
process.stdout.write(JSON.stringify({
  requestsPerSecond: latencies.length / Number(seconds),
  p50: at(0.5),
  p99: at(0.99),
  non2xx,
  errors,
  timeouts,
  total: latencies.length
}) + "\n")
