/**
 * Two nodes of the service in one test process on ONE database, as two
 * `herald serve` on one PostgreSQL: each has its own routes, workers,
 * caches, actor runtime and limiter; they share only the database. On
 * PostgreSQL each node has its own pool on a fresh database; on the embedded
 * database both reach the one PGlite through its socket, and the rate limits
 * are pinned to the database as on PostgreSQL (the embedded database is one
 * process outside tests, so it keeps them in memory there).
 */
import { Context, ConfigProvider, Effect, Layer, Redacted } from "effect"
import { HttpServer } from "effect/http"
import type { SqlClient } from "effect/sql"
import { RateLimitStore } from "../../src/billing/RateLimiter.ts"
import type { RateLimiter } from "../../src/billing/RateLimiter.ts"
import { embeddedClientLayer, postgresLayer } from "../../src/db/Database.ts"
import { serveEmbedded } from "../../src/db/Embedded.ts"
import type { Identity } from "../../src/identity/Identity.ts"
import { CapabilitiesLayer, serviceLayer } from "../../src/runtime/Server.ts"
import { embeddedDataCopy, freshPostgres, usingPostgres } from "../../../../test/support/database.ts"
import { TestServer } from "../../../../test/support/server.ts"

export interface Node {
  readonly baseUrl: string
  /** The node's services: `TestServer` (so the support's clients talk to this node), Identity, its SqlClient, its limiter. */
  readonly context: Context.Context<TestServer | Identity | SqlClient.SqlClient | RateLimiter>
}

export class TwoNodes extends Context.Service<TwoNodes, readonly [Node, Node]>()("test/TwoNodes") {}

/** Runs `effect` against `node`: the support's `makeAgent`, `agentClient`, `rawFetch` then talk to it. */
export const on = <A, E, R>(node: Node, effect: Effect.Effect<A, E, R>) => Effect.provide(effect, node.context)

/** A fresh database both nodes reach, for the life of the scope: how each node connects to it. */
const sharedDatabase = Effect.gen(function*() {
  if (usingPostgres) {
    const url = yield* freshPostgres
    return () => postgresLayer(Redacted.make(url), 4)
  }
  const socket = yield* serveEmbedded(yield* embeddedDataCopy("two-nodes")).pipe(Effect.orDie)
  return () => embeddedClientLayer(socket)
})

const nodeLayer = (env: Record<string, string>, database: Effect.Success<typeof sharedDatabase>) =>
  Layer.effect(TestServer, Effect.map(HttpServer.HttpServer, (server) => {
    if (server.address._tag === "UnixPathAddress") throw new Error("expected a TCP address")
    return { baseUrl: `http://127.0.0.1:${server.address.port}` }
  })).pipe(
    Layer.provideMerge(serviceLayer({ port: 0, host: "127.0.0.1" })),
    Layer.provideMerge(CapabilitiesLayer.pipe(
      Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown(env))),
      Layer.provide(Layer.succeed(RateLimitStore, "database"))
    )),
    Layer.provideMerge(database())
  )

/**
 * Two nodes with the service settings `env` (rate limits, pacing, …) on one
 * fresh database. Closed in reverse: the nodes, then the database.
 */
export const twoNodesLayer = (env: Record<string, string>) =>
  Layer.effect(TwoNodes, Effect.gen(function*() {
    const database = yield* sharedDatabase
    const node = Effect.map(Layer.build(Layer.fresh(nodeLayer(env, database))), (context): Node => ({
      baseUrl: Context.get(context, TestServer).baseUrl,
      context
    }))
    // One after the other: the second finds the migrations applied.
    const a = yield* node
    const b = yield* node
    return [a, b] as const
  }))
