import { Effect, Layer, Redacted } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { RoutesLayer, CapabilitiesLayer } from "./packages/server/src/runtime/Server.ts"
import { postgresLayer } from "./packages/server/src/db/Database.ts"
const token = process.argv[2]!
const paths = process.argv.slice(3)
const app = RoutesLayer.pipe(
  Layer.provideMerge(CapabilitiesLayer),
  Layer.provideMerge(postgresLayer(Redacted.make("postgres://postgres@127.0.0.1:5432/herald_prof"), 4)),
  Layer.provide(HttpServer.layerServices)
)
const { handler } = HttpRouter.toWebHandler(app as any, { disableLogger: true })
const headers = { authorization: `Bearer ${token}` }
for (const path of paths) {
  let best = 0
  for (let round = 0; round < 8; round++) {
    const n = 10000
    const t0 = performance.now()
    let inflight: Promise<Response>[] = []
    for (let i = 0; i < n; i++) {
      inflight.push(handler(new Request(`http://localhost${path}`, { headers })))
      if (inflight.length >= 50) { const rs = await Promise.all(inflight); for (const r of rs) await r.arrayBuffer(); inflight = [] }
    }
    await Promise.all(inflight)
    best = Math.max(best, n / (performance.now() - t0) * 1000)
  }
  console.log(`${process.env.TAG ?? ""} ${path}: best ${best.toFixed(0)} req/s (${(1e6 / best).toFixed(0)} µs/req)`)
}
process.exit(0)
