/**
 * The load generator, run in its own process so it does not share an event
 * loop with what it measures: autocannon against one URL, results as JSON.
 * argv: url durationSeconds connections [requestJson]
 * where requestJson is `{method?, headers?, body?}`.
 */
import autocannon from "autocannon"
import { report } from "./loadReport.ts"

const [url, duration, connections, request] = process.argv.slice(2)
const { body, headers = {}, method = "GET" } = JSON.parse(request ?? "{}") as {
  method?: "GET" | "POST"
  headers?: Record<string, string>
  body?: string
}
const result = await autocannon({
  url: url!,
  duration: Number(duration),
  connections: Number(connections),
  pipelining: 1,
  method,
  headers,
  ...(body !== undefined ? { body } : {})
})
report(result)
