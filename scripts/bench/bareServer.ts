/**
 * How the bench's bare Effect servers (effect-floor.ts, notifications-effect-floor.ts,
 * activities-effect-floor.ts) serve: their routes alone on 127.0.0.1, no logger, the
 * port printed once listening.
 */
import { NodeHttpServer, NodeRuntime } from "@effect/platform-node"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Redacted } from "effect"
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

/**
 * A database floor's arguments (argv: databaseUrl port): its port, and its pool,
 * as Herald's in the bench (10 connections, statements of concurrent fibers
 * pipelined on each), named `applicationName` so the bench finds its backends.
 */
export const databaseFloorArgs = (applicationName: string) => {
  const [url, portArg] = process.argv.slice(2)
  return {
    port: Number(portArg ?? 0),
    database: PgClient.layer({ url: Redacted.make(url!), maxConnections: 10, multiplex: true, applicationName })
  }
}
