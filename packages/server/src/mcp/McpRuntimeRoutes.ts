/**
 * What Herald asks of Effect's MCP runtime besides serving requests, through
 * the runtime's own route handlers (kept when `McpServer.layerHttp` registers
 * them, before any middleware: `McpSessions.capturingRoutes`):
 *
 * - `openSession`: a session of the 2025 revisions for a client this runtime
 *   has never seen — the `initialize` the session answered on the node that
 *   opened it, replayed here. The runtime keeps a session's negotiated
 *   revision and client capabilities in this process's memory and mints its
 *   ids itself (nothing registers a session under a given id), so a session
 *   resumed here has an id of this runtime's own (McpSessions.ts maps it).
 * - `endSession`: the client's own DELETE with the runtime's id, so the
 *   runtime forgets the session and interrupts its in-flight requests.
 * - `withRuntimeSession`: a request as this runtime must see it, with its id
 *   for the session.
 */
import { Effect, Option, Schema } from "effect"
import { HttpEffect, HttpServerRequest } from "effect/http"
import type { HttpServerResponse } from "effect/http"
import { MCP_PATH } from "../oauth/McpScopes.ts"
import type { Resumable } from "./McpSessionsRepo.ts"

export const SESSION_ID_HEADER = "mcp-session-id"
export const PROTOCOL_VERSION_HEADER = "mcp-protocol-version"

/** A route handler of the MCP runtime (it reads the request from the context). */
export type RuntimeRoute = Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, HttpServerRequest.HttpServerRequest>

/** The MCP runtime's POST (JSON-RPC) and DELETE (end a session) handlers. */
export interface RuntimeRoutes {
  readonly post: RuntimeRoute
  readonly delete: RuntimeRoute
}

// The URL is never routed: the handlers read the headers and the body only.
const internal = (path: string, init: RequestInit) =>
  HttpServerRequest.fromWeb(new Request(`http://herald.internal${path}`, init))

const JsonObject = Schema.Record(Schema.String, Schema.Unknown)

const InitializeBody = Schema.Struct({
  method: Schema.Literal("initialize"),
  params: Schema.Struct({ capabilities: JsonObject, clientInfo: JsonObject, _meta: Schema.optionalKey(JsonObject) })
})
const decodeInitialize = Schema.decodeUnknownOption(Schema.fromJsonString(InitializeBody))

/**
 * What resumes the session an `initialize` opened: the client's offer (its
 * body) with the revision the runtime answered; undefined for any other body.
 */
export const resumableFrom = (body: string, negotiated: string | undefined): Resumable | undefined => {
  if (negotiated === undefined) return undefined
  const initialize = decodeInitialize(body)
  if (Option.isNone(initialize)) return undefined
  const { _meta, capabilities, clientInfo } = initialize.value.params
  return { protocolVersion: negotiated, capabilities, clientInfo, ...(_meta === undefined ? {} : { meta: _meta }) }
}

/**
 * Opens a session in the runtime as `resume` negotiated it, through the
 * runtime's POST handler; answers the runtime's id for it, or undefined when
 * it refused. The runtime sets the id as its answer is sent (a pre-response
 * handler), so the answer is sent here, to this function, to read it.
 */
export const openSession = (post: RuntimeRoute, resume: Resumable): Effect.Effect<string | undefined> =>
  Effect.suspend(() => {
    let minted: string | undefined
    let status = 0
    const request = internal(MCP_PATH, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 0,
        method: "initialize",
        params: {
          protocolVersion: resume.protocolVersion,
          capabilities: resume.capabilities,
          clientInfo: resume.clientInfo,
          ...(resume.meta === undefined ? {} : { _meta: resume.meta })
        }
      })
    })
    const sent = HttpEffect.toHandled(post, (_, response) =>
      Effect.sync(() => {
        status = response.status
        if (status === 200) minted = response.headers[SESSION_ID_HEADER]
      }))
    return sent.pipe(
      Effect.provideService(HttpServerRequest.HttpServerRequest, request),
      Effect.andThen(Effect.suspend(() =>
        minted === undefined
          ? Effect.as(Effect.logWarning("the MCP runtime refused to resume a session").pipe(Effect.annotateLogs({ status })), undefined)
          : Effect.succeed(minted)
      ))
    )
  })

/** Ends a session in the runtime (its DELETE handler, with the runtime's id for it). */
export const endSession = (del: RuntimeRoute, runtimeId: string): Effect.Effect<void> =>
  del.pipe(
    Effect.provideService(HttpServerRequest.HttpServerRequest, internal(MCP_PATH, {
      method: "DELETE",
      headers: { [SESSION_ID_HEADER]: runtimeId }
    })),
    Effect.catchCause((cause) => Effect.logWarning("ending an MCP session failed", cause)),
    Effect.asVoid
  )

// Framing of the connection the request came on, not of the request the runtime reads.
const connectionHeaders = new Set(["connection", "content-length", "host", "keep-alive", "transfer-encoding"])

/**
 * The request with the runtime's id for its session. Its body was read
 * already (the gate reads it before anything runs), so it is carried as text.
 */
export const withRuntimeSession = (
  request: HttpServerRequest.HttpServerRequest,
  runtimeId: string,
  body: string
): HttpServerRequest.HttpServerRequest => {
  const headers = new globalThis.Headers()
  for (const [name, value] of Object.entries(request.headers)) {
    if (!connectionHeaders.has(name)) headers.set(name, value)
  }
  headers.set(SESSION_ID_HEADER, runtimeId)
  return internal(request.url, { method: request.method, headers, ...(request.method === "POST" ? { body } : {}) })
}
