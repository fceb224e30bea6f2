/**
 * The soak's load generator (soak.ts), in its own process like load.ts: one
 * continuous autocannon load, so there is no gap between minutes, that prints
 * one JSON line per window as the window ends (its rate and latency alone,
 * which autocannon's result, one histogram for the whole run, cannot give).
 * The parent reads the table sizes when each line arrives, and ends this
 * process after the last (SIGTERM).
 * argv: url windows windowSeconds connections requestJson
 */
import autocannon from "autocannon"

const [url, windowsArg, secondsArg, connections, request] = process.argv.slice(2)
const windows = Number(windowsArg)
const windowMs = Number(secondsArg) * 1000
const { body, headers = {}, method = "GET" } = JSON.parse(request ?? "{}") as {
  method?: "GET" | "POST"
  headers?: Record<string, string>
  body?: string
}

/** What one window saw; latencies of 2xx answers only, as autocannon counts them. */
let latencies: Array<number> = []
let non2xx = 0
let errors = 0
let timeouts = 0

/** Nearest-rank percentile of sorted values, in whole ms like autocannon's. */
const percentile = (sorted: ReadonlyArray<number>, q: number) =>
  sorted.length === 0 ? 0 : Math.round(sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)]!)

// The parent stops the run after the last window; the duration only bounds it if the parent is gone.
// With a callback autocannon returns its instance (events, stop) rather than a promise of the result.
const instance = autocannon({
  url: url!,
  duration: (windows * windowMs) / 1000 + 30,
  connections: Number(connections),
  pipelining: 1,
  method,
  headers,
  ...(body !== undefined ? { body } : {})
}, () => {})
instance.on("response", (_client, statusCode, _bytes, responseTime) => {
  if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime)
  else non2xx++
})
instance.on("reqError", (error) => {
  errors++
  if (error.message === "request timed out") timeouts++
})

const started = performance.now()
let window = 0
let windowStart = started
const flush = () => {
  // The window's own length (its timer may be late by a few ms): the rate is of the answers it counted.
  const now = performance.now()
  const seconds = (now - windowStart) / 1000
  windowStart = now
  window++
  const sorted = latencies.sort((a, b) => a - b)
  process.stdout.write(JSON.stringify({
    window,
    seconds,
    requestsPerSecond: sorted.length / seconds,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    max: Math.round(sorted.at(-1) ?? 0),
    total: sorted.length,
    non2xx,
    errors,
    timeouts
  }) + "\n")
  latencies = []
  non2xx = errors = timeouts = 0
  // After the last window the load goes on, uncounted, until the parent has read the tables and ends
  // this process: its last minute's end is read under load like the others.
  // Each window's end from the start, so timer lateness does not add up over ten minutes.
  if (window < windows) setTimeout(flush, started + (window + 1) * windowMs - performance.now())
}
setTimeout(flush, windowMs)
