/**
 * Nodes of the service in one test process on ONE database, as several
 * `herald serve` on one PostgreSQL, each in a scope of its own so a test can
 * stop one (its HTTP server closes: its port refuses connections), and a
 * plain round-robin balancer in front of them. Each node has its own routes,
 * workers, caches and MCP runtime; they share only the database (on
 * PostgreSQL each node has its own pool; on the embedded database all reach
 * the one PGlite through its socket).
 */
import { Context, ConfigProvider, Effect, Exit, Layer, Redacted, Scope } from "effect"
import { HttpServer } from "effect/http"
import * as http from "node:http"
import { embeddedClientLayer, postgresLayer } from "../../src/db/Database.ts"
import { serveEmbedded } from "../../src/db/Embedded.ts"
import type { Identity } from "../../src/identity/Identity.ts"
import type { McpSessions } from "../../src/mcp/McpSessions.ts"
import { CapabilitiesLayer, serviceLayer } from "../../src/runtime/Server.ts"
import { embeddedDataCopy, freshPostgres, usingPostgres } from "../../../../test/support/database.ts"
import { TestServer } from "../../../../test/support/server.ts"

/** How each node connects to the one database of the test file. */
export class SharedDatabase extends Context.Service<SharedDatabase, {
  readonly connect: () => ReturnType<typeof postgresLayer>
}>()("test/mcp/SharedDatabase") {
  /** A fresh database, for the life of the layer. */
  static readonly layer = Layer.effect(SharedDatabase, Effect.gen(function*() {
    if (usingPostgres) {
      const url = yield* freshPostgres
      return { connect: () => postgresLayer(Redacted.make(url), 4) }
    }
    const socket = yield* serveEmbedded(yield* embeddedDataCopy("mcp-nodes")).pipe(Effect.orDie)
    return { connect: () => embeddedClientLayer(socket) }
  }))
}

export interface Node {
  readonly baseUrl: string
  /** `TestServer` (so the support's clients talk to this node), Identity, the node's MCP sessions. */
  readonly context: Context.Context<TestServer | Identity | McpSessions>
  /** Stops the node: its server closes and its port refuses connections. */
  readonly stop: Effect.Effect<void>
}

/** Runs `effect` against `node`: the support's `makeAgent`, `rawFetch`, `connect` then talk to it. */
export const on = <A, E, R>(node: Node, effect: Effect.Effect<A, E, R>) => Effect.provide(effect, node.context)

const nodeLayer = (database: ReturnType<typeof postgresLayer>) =>
  Layer.effect(TestServer, Effect.map(HttpServer.HttpServer, (server) => {
    if (server.address._tag === "UnixPathAddress") throw new Error("expected a TCP address")
    return { baseUrl: `http://127.0.0.1:${server.address.port}` }
  })).pipe(
    Layer.provideMerge(serviceLayer({ port: 0, host: "127.0.0.1" })),
    Layer.provideMerge(CapabilitiesLayer.pipe(Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown({}))))),
    Layer.provideMerge(database)
  )

/** Starts a node on the shared database: built on a memo map of its own, so it shares no service with another node. */
export const startNode = Effect.gen(function*() {
  const { connect } = yield* SharedDatabase
  const scope = yield* Scope.make()
  // Stopped with the test at the latest (closing a closed scope does nothing).
  yield* Effect.addFinalizer(() => Scope.close(scope, Exit.void))
  const context = yield* Layer.buildWithMemoMap(nodeLayer(connect()), yield* Layer.makeMemoMap, scope).pipe(Effect.orDie)
  return {
    baseUrl: Context.get(context, TestServer).baseUrl,
    context,
    stop: Scope.close(scope, Exit.void)
  } satisfies Node
})

/** One request the balancer passed on: to which node, what it was, and (once answered) the status. */
export interface Passed {
  readonly node: number
  readonly method: string
  /** The JSON-RPC method of the body (`initialize`, `tools/call` …), when it has one. */
  readonly rpc: string | undefined
  /** The tool a `tools/call` names. */
  readonly tool: string | undefined
  readonly session: string | undefined
  status: number | undefined
}

export interface Balancer {
  readonly url: string
  /** Every request passed on, in the order they were sent to a node. */
  readonly passed: ReadonlyArray<Passed>
}

const describeBody = (body: Buffer): { readonly rpc: string | undefined; readonly tool: string | undefined } => {
  try {
    const message = JSON.parse(body.toString("utf8"))
    return { rpc: message?.method, tool: message?.params?.name }
  } catch {
    return { rpc: undefined, tool: undefined }
  }
}

/**
 * A plain round-robin balancer on a loopback port: each request goes to the
 * next node in turn, on a connection of its own, and nothing ties a session
 * to a node. A node that refuses the connection (stopped) never saw the
 * request, so the next node gets it, as a balancer's passive health check does.
 */
export const balancer = (nodes: ReadonlyArray<Node>) =>
  Effect.acquireRelease(
    Effect.callback<{ readonly server: http.Server; readonly balancer: Balancer }>((resume) => {
      const passed: Array<Passed> = []
      let next = 0
      const server = http.createServer((request, response) => {
        const chunks: Array<Buffer> = []
        request.on("data", (chunk: Buffer) => chunks.push(chunk))
        request.on("end", () => {
          const body = Buffer.concat(chunks)
          const send = (tries: number) => {
            const node = next++ % nodes.length
            const entry: Passed = {
              node,
              method: request.method!,
              ...describeBody(body),
              session: request.headers["mcp-session-id"] as string | undefined,
              status: undefined
            }
            const { connection: _, ...headers } = request.headers
            const upstream = http.request(new URL(request.url!, nodes[node]!.baseUrl), {
              method: request.method,
              headers,
              agent: false
            }, (answer) => {
              entry.status = answer.statusCode
              response.writeHead(answer.statusCode!, answer.headers)
              answer.pipe(response)
            })
            upstream.on("error", (error: NodeJS.ErrnoException) => {
              if (error.code === "ECONNREFUSED" && tries + 1 < nodes.length) return send(tries + 1)
              if (!response.headersSent) response.writeHead(502)
              response.end()
            })
            // Recorded once the node took the connection: before its answer (a long-poll's comes much later).
            upstream.on("socket", (socket) => socket.once("connect", () => passed.push(entry)))
            upstream.end(body)
          }
          send(0)
        })
      })
      server.listen(0, "127.0.0.1", () => {
        const address = server.address()
        const port = typeof address === "object" && address !== null ? address.port : 0
        resume(Effect.succeed({ server, balancer: { url: `http://127.0.0.1:${port}`, passed } }))
      })
    }),
    ({ server }) =>
      Effect.callback<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  ).pipe(Effect.map(({ balancer }) => balancer))
