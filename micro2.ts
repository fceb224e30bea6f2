import { Effect, Layer, Schema } from "effect"
import { HttpRouter, HttpServer, HttpServerResponse } from "effect/http"
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
const S = Schema.Struct({ a: Schema.String, b: Schema.Number })
const Api = HttpApi.make("x").add(HttpApiGroup.make("g").add(HttpApiEndpoint.get("e", "/api/e", { success: S })))
const G = HttpApiBuilder.group(Api, "g", (h) => h.handle("e", () => Effect.succeed({ a: "x", b: 1 })))
const app = Layer.mergeAll(
  HttpApiBuilder.layer(Api).pipe(Layer.provide(G)),
  HttpRouter.add("GET", "/plain", HttpServerResponse.jsonUnsafe({ a: "x", b: 1 }))
).pipe(Layer.provide(HttpServer.layerServices))
const { handler } = HttpRouter.toWebHandler(app as any, { disableLogger: true })
for (const path of ["/plain", "/api/e", "/plain", "/api/e"]) {
  let best = 0
  for (let round = 0; round < 5; round++) {
    const n = 20000
    const t0 = performance.now()
    let inflight: Promise<Response>[] = []
    for (let i = 0; i < n; i++) {
      inflight.push(handler(new Request(`http://localhost${path}`)))
      if (inflight.length >= 50) { const rs = await Promise.all(inflight); for (const r of rs) await r.arrayBuffer(); inflight = [] }
    }
    await Promise.all(inflight)
    best = Math.max(best, n / (performance.now() - t0) * 1000)
  }
  console.log(`${path}: best ${best.toFixed(0)} req/s (${(1e6 / best).toFixed(0)} µs/req)`)
}
process.exit(0)
