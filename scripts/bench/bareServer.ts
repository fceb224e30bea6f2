/**
 * How the bench's bare Effect servers (effect-floor.ts, notifications-effect-floor.ts)
 * serve: their routes alone on 127.0.0.1, no logger, the port printed once listening.
 */
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { createServer } from "node:http"

/** The routes served on `port` (0 = any), keep-alive as Herald's server. */
export const bareServer = <E, R>(routes: Layer.Layer<never, E, R>, port: number) =>
  HttpRouter.serve(routes, { disableLogger: true, disableListenLog: true }).pipe(
    Layer.provideMerge(NodeHttpServer.layer(() => createServer({ keepAliveTimeout: 65_000 }), { port, host: "127.0.0.1" }))
  )

/** Runs `server` until the process is stopped, printing its port first. */
export const runPrintingPort = <E>(server: Layer.Layer<HttpServer.HttpServer, E>, port: number) =>
  NodeRuntime.runMain(Effect.gen(function*() {
    const address = (yield* HttpServer.HttpServer).address
    process.stdout.write(`${address._tag === "UnixPathAddress" ? port : address.port}\n`)
    return yield* Effect.never
  }).pipe(Effect.provide(server)))
