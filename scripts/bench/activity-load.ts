/**
 * The live-activities load, run in its own process (like load.ts): one
 * autocannon connection per activity, each sending PATCH /activities/{id}
 * with a routine progress update at `rate` requests a second (one in flight).
 * argv: baseUrl token seconds rate activityId…; results as JSON.
 */
import autocannon from "autocannon"
import { report } from "./loadReport.ts"

const [baseUrl, token, seconds, rate, ...ids] = process.argv.slice(2)
const perSecond = Number(rate)
const total = perSecond * Number(seconds)
let next = 0

const result = await autocannon({
  url: baseUrl!,
  connections: ids.length,
  connectionRate: perSecond,
  duration: Number(seconds),
  pipelining: 1,
  requests: [{
    method: "PATCH",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    // Each connection's context is its own: the first request gives it its activity.
    setupRequest: (request, context) => {
      const own = context as { id?: string; n?: number }
      own.id ??= ids[next++ % ids.length]!
      const n = (own.n = (own.n ?? 0) + 1)
      return {
        ...request,
        path: `/api/agent/activities/${own.id}`,
        body: JSON.stringify({ props: { progress: Math.min(1, n / total), status: `step ${n}` } })
      }
    }
  }]
})
report(result)
