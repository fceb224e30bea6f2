/**
 * The metrics listener: with `HERALD_METRICS_PORT` set, `/metrics` is served
 * by a second HTTP server of its own (on `HERALD_METRICS_HOST`, loopback
 * unless told) and the API listener no longer has it (http/Ops.ts), so a
 * scrape can stay on a private interface while the API faces the internet.
 * The metrics token, when set, is asked here too.
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Context, Effect, Layer, Option } from "effect"
import { HttpRouter, HttpServer, HttpServerResponse } from "effect/http"
import type { NetAddress } from "effect/net"
import { createServer } from "node:http"
import { MetricsConfig } from "../config/MetricsConfig.ts"
import { answerClientErrors } from "../http/ClientErrors.ts"
import { MetricsRoute } from "../http/Ops.ts"
import { routerConfig } from "../http/Routes.ts"
import { closePromptly } from "./PromptClose.ts"

/** Where the metrics listener listens; none when `/metrics` is on the API listener. */
export class MetricsListener extends Context.Service<MetricsListener, {
  readonly address: Option.Option<NetAddress.SocketAddress>
}>()("herald/MetricsListener") {}

/** Any other request: the spec's 404 body, and not a word about the API's routes (the edge's 405 would list methods). */
const NotFound = HttpRouter.add("*", "*", HttpServerResponse.jsonUnsafe({ error: "No such route.", code: "NOT_FOUND" }, { status: 404 }))

/** A server with `/metrics` only. */
const served = (options: { readonly port: number; readonly host: string }) =>
  HttpRouter.serve(Layer.merge(MetricsRoute, NotFound), { disableLogger: true, disableListenLog: true, routerConfig }).pipe(
    Layer.provideMerge(NodeHttpServer.layer(() => closePromptly(answerClientErrors(createServer())), options))
  )

/** Needs `MetricsConfig`; starts the second server only when a metrics port is set. */
export const MetricsListenerLayer = Layer.unwrap(Effect.map(MetricsConfig, (config) =>
  Option.match(config.port, {
    onNone: () => Layer.succeed(MetricsListener, { address: Option.none() }),
    onSome: (port) =>
      // Only the address leaves this layer: the second server's router and `HttpServer` stay inside it.
      Layer.effect(MetricsListener, Effect.map(HttpServer.HttpServer, (server) => ({ address: Option.some(server.address) }))).pipe(
        Layer.provide(served({ port, host: config.host }))
      )
  })))
