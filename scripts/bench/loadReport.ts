/** What a load process prints: autocannon's result as the one JSON line the bench reads. */
import type autocannon from "autocannon"

export const report = (result: autocannon.Result) =>
  process.stdout.write(JSON.stringify({
    requestsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    total: result.requests.total
  }) + "\n")
