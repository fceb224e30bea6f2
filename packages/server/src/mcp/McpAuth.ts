/**
 * Who may use the MCP endpoint, decided at the HTTP level before the MCP
 * runtime sees a byte of the request, on every request of a session:
 *
 * - The bearer gate (auth/BearerGate.ts), shared with the Agent API:
 *   `Authorization: Bearer` with an API token (`hld_…`) or an OAuth access
 *   token (`hlo_…`) (a revoked token is refused on its next request). Missing or refused: 401
 *   with the `WWW-Authenticate` challenge that points an MCP client at the
 *   protected-resource metadata (RFC 9728) and the scopes to ask for, which is
 *   what makes a client start OAuth; `error="invalid_token"` when a token was
 *   sent. The body is Herald's `{code: "UNAUTHORIZED", error}`.
 * - The token's rate limits, as on the Agent API (auth/AgentAuthLive.ts):
 *   each JSON-RPC message of the body counts as a request and each call of a
 *   sending tool as a send, taken all or none (McpMeter.ts; a batch over
 *   `MAX_BATCH_MESSAGES` is refused whole with 400). Over a limit: 429
 *   `RATE_LIMITED` with `Retry-After`, and nothing of the body runs. The
 *   units taken go with the request (`McpPrepaid`), for `ToolMeter` to
 *   meter each tool call where it runs without charging it twice.
 * - A request with an `Mcp-Session-Id` the token did not open (on any node)
 *   answers 404 like an unknown session; a use refreshes the session, and
 *   `initialize` and DELETE open and close it in the registry (McpSessions.ts:
 *   sessions in the database, the cap per token, idle expiry). A session this
 *   node's MCP runtime knows by another id (resumed here) reaches the runtime
 *   with that id. A request of the stateless revision (`2026-07-28`) carries
 *   no session: any node answers it.
 * - Then the body is guarded (http/BodyGuard.ts) and the request runs as the
 *   token (`CurrentAgent`).
 *
 * Tools the token's scopes do not allow are hidden from `tools/list`, and a
 * call of one answers the JSON-RPC error `-32003` naming the missing scopes
 * (`ScopeGate`).
 */
import { CurrentAgent } from "@herald/api"
import { Context, Effect, Schema } from "effect"
import { McpSchema, McpServer } from "effect/ai"
import { HttpEffect, HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { AppConfig } from "../config/AppConfig.ts"
import { guardBody } from "../http/BodyGuard.ts"
import { makeBearerGate } from "../auth/BearerGate.ts"
import { MCP_RESOURCE_METADATA_PATH, MCP_SCOPES } from "../oauth/McpScopes.ts"
import { PROTOCOL_VERSION_HEADER, resumableFrom, withRuntimeSession } from "./McpRuntimeRoutes.ts"
import { McpSessions, SESSION_ID_HEADER } from "./McpSessions.ts"
import { withAnsweredErrorsQuiet } from "./ProtocolErrors.ts"
import { batchTooLong, MAX_BATCH_MESSAGES, McpPrepaid, rateLimitedMessage } from "./McpMeter.ts"
import { bodyUnits, missingScopes } from "./ToolRoutes.ts"

/** The methods the MCP endpoint serves: POST (JSON-RPC) and DELETE (end a session). */
export const MCP_METHODS = ["DELETE", "POST"] as const

/** The `WWW-Authenticate` challenge of a 401 (`invalidToken`: a token was sent and refused). */
export const mcpChallenge = (publicUrl: string, invalidToken: boolean) =>
  `Bearer resource_metadata="${publicUrl}${MCP_RESOURCE_METADATA_PATH}", scope="${MCP_SCOPES.join(" ")}"` +
  (invalidToken ? `, error="invalid_token"` : "")

const unauthorized = (challenge: string, error: string) =>
  HttpServerResponse.jsonUnsafe({ error, code: "UNAUTHORIZED" }, { status: 401, headers: { "www-authenticate": challenge } })

const methodNotAllowed = HttpServerResponse.jsonUnsafe(
  { error: "Method not allowed.", code: "METHOD_NOT_ALLOWED" },
  { status: 405, headers: { allow: MCP_METHODS.join(", ") } }
)

// The MCP runtime refuses some requests with an empty body; the edge would
// answer those generically ("No such route." for an unknown session), so they
// leave here in Herald's shape with what went wrong.
const explained: Record<number, { readonly code: string; readonly error: string }> = {
  403: { code: "FORBIDDEN", error: "This Origin may not use the MCP endpoint." },
  404: {
    code: "NOT_FOUND",
    error: "No such MCP session (it was ended, or this token never opened it): send initialize to start a new one."
  },
  406: { code: "NOT_ACCEPTABLE", error: "Accept must include both application/json and text/event-stream." }
}

const explain = (response: HttpServerResponse.HttpServerResponse): HttpServerResponse.HttpServerResponse => {
  const known = response.body._tag === "Empty" ? explained[response.status] : undefined
  return known === undefined ? response : HttpServerResponse.jsonUnsafe(known, { status: response.status, headers: response.headers })
}

const unknownSession = explain(HttpServerResponse.empty({ status: 404 }))

/**
 * A request without a session id (`initialize`, or the stateless revision):
 * an `initialize` answered with a session id opens it under the token, with
 * what resumes it on another node (its body and the revision answered). The
 * runtime sets those headers as the response is sent (a pre-response
 * handler), so they are read by one appended after the runtime's, and the
 * session is stored before the client learns its id.
 */
const recordOpening = (
  context: Context.Context<never>,
  sessions: McpSessions["Service"],
  tokenId: string,
  body: string
): void =>
  HttpEffect.appendPreResponseHandlerUnsafe(context, (_, sent) => {
    const opened = sent.headers[SESSION_ID_HEADER]
    if (opened === undefined) return Effect.succeed(sent)
    return Effect.as(sessions.opened(opened, tokenId, resumableFrom(body, sent.headers[PROTOCOL_VERSION_HEADER])), sent)
  })

/**
 * What the runtime's answer in a session tells the registry: a DELETE it
 * ended closes the session everywhere; a 404 means it no longer holds it here.
 */
const recordAnswer = (
  sessions: McpSessions["Service"],
  sessionId: string,
  response: HttpServerResponse.HttpServerResponse
): Effect.Effect<void> => {
  if (response.body._tag !== "Empty") return Effect.void
  if (response.status === 204) return sessions.closed(sessionId)
  return response.status === 404 ? sessions.lost(sessionId) : Effect.void
}

/** The credential of an `Authorization` header: `Bearer <token>` (scheme case-insensitive), else the empty string. */
const bearerOf = (header: string): string => {
  const match = /^Bearer +(\S+) *$/i.exec(header)
  return match === null ? "" : match[1]!
}

/** The HTTP-level gate of the MCP routes (McpRoutes.ts), providing `CurrentAgent` to every MCP handler. */
export const McpHttpAuth = HttpRouter.middleware<{ provides: CurrentAgent }>()(Effect.gen(function*() {
  const gate = yield* makeBearerGate
  const sessions = yield* McpSessions
  const { publicUrl } = yield* AppConfig
  const missing = mcpChallenge(publicUrl, false)
  const refused = mcpChallenge(publicUrl, true)
  return (httpEffect) =>
    Effect.withFiber((fiber) => {
      const request = Context.getUnsafe(fiber.context, HttpServerRequest.HttpServerRequest)
      // The MCP runtime answers GET (no server-initiated stream here) and other methods 405 with an
      // empty body; answered here in Herald's shape, with `Allow`, before any credential is looked at.
      if (!(MCP_METHODS as ReadonlyArray<string>).includes(request.method)) return Effect.succeed(methodNotAllowed)
      const header = request.headers["authorization"]
      if (header === undefined || header === "") {
        return Effect.succeed(unauthorized(missing, "Missing bearer token: send Authorization: Bearer <token> (an API token or an OAuth access token)."))
      }
      const bearer = bearerOf(header)
      if (bearer === "") return Effect.succeed(unauthorized(refused, "Malformed Authorization header: send Authorization: Bearer <token>."))
      // Authenticated first: only then is the body read (to know what it costs, and to guard it).
      const demand = Effect.map(Effect.orElseSucceed(request.text, () => ""), (text) => {
        const body = request.method === "POST" ? bodyUnits(text) : { batch: false, messages: 1, sends: 0 }
        // A batch over the cap costs one request and runs nothing; otherwise every message and send, all or none.
        const tooLong = body.batch && body.messages > MAX_BATCH_MESSAGES
        const units = tooLong ? { requests: 1, sends: 0 } : { requests: body.messages, sends: body.sends }
        return { units, text, tooLong, messages: body.messages }
      })
      // No scopes are asked at the door (`ScopeGate` checks each tool): a refusal is the bearer's or the rate limit's.
      return Effect.matchEffect(gate.pass(bearer, [], demand), {
        onFailure: (e) =>
          Effect.succeed(
            e._tag === "OverRateLimit"
              ? HttpServerResponse.jsonUnsafe({ error: rateLimitedMessage(e.outcome, e.units), code: "RATE_LIMITED" }, { status: 429 })
              : unauthorized(refused, e.error)
          ),
        onSuccess: ({ agent, demand: { messages, text, tooLong, units } }) => {
          if (tooLong) return Effect.succeed(HttpServerResponse.jsonUnsafe(batchTooLong(messages), { status: 400 }))
          const asAgent = <E, R>(effect: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
            effect.pipe(
              Effect.provideService(CurrentAgent, agent),
              // The units just taken, for the request's tool calls to pay with (McpMeter.ts): none charged twice.
              Effect.provideService(McpPrepaid, { requests: units.requests, sends: units.sends })
            )
          const sessionId = request.headers[SESSION_ID_HEADER]
          if (sessionId === undefined) {
            return guardBody(request, withAnsweredErrorsQuiet(Effect.map(asAgent(httpEffect), (response) => {
              recordOpening(fiber.context, sessions, agent.tokenId, text)
              return explain(response)
            })))
          }
          // Another token's session answers exactly as an unknown one: the id alone opens nothing.
          return guardBody(request, Effect.flatMap(sessions.admit(sessionId, agent.tokenId), (runtimeId) => {
            if (runtimeId === undefined) return Effect.succeed(unknownSession)
            const inRuntime = runtimeId === sessionId
              ? httpEffect
              : Effect.provideService(httpEffect, HttpServerRequest.HttpServerRequest, withRuntimeSession(request, runtimeId, text))
            return withAnsweredErrorsQuiet(Effect.flatMap(asAgent(inRuntime), (response) =>
              Effect.as(recordAnswer(sessions, sessionId, response), explain(response))))
          }))
        }
      })
    })
}))

/** The JSON-RPC error code of a tool call the token's scopes do not allow (implementation-defined server error range). */
export const MISSING_SCOPE_CODE = -32003

/**
 * A tool call the token's scopes do not allow: JSON-RPC error `-32003`
 * naming the missing scopes, with the Agent API's `{code: "MISSING_SCOPE",
 * error, required}` as its `data`.
 */
export class McpMissingScope extends Schema.Error<McpMissingScope>("McpMissingScope")({
  ...McpSchema.McpErrorBase.fields,
  _tag: Schema.tag("McpMissingScope"),
  code: Schema.tag(MISSING_SCOPE_CODE)
}) {}

/**
 * Hides a tool from `tools/list` when the token lacks a scope it needs, and
 * refuses a call of it with `McpMissingScope`. A visibility gate alone would
 * answer a call as if the tool did not exist; failing the check on
 * `tools/call` instead makes the call's answer name the scopes.
 */
export const ScopeGate = McpServer.visibility(({ method, target }) =>
  Effect.flatMap(CurrentAgent, (agent) => {
    const missing = missingScopes(target, agent.scopes)
    if (missing.length === 0) return Effect.succeed(true)
    if (method !== "tools/call") return Effect.succeed(false)
    return Effect.fail(new McpMissingScope({
      message: `The token lacks scopes: ${missing.join(", ")}.`,
      data: { code: "MISSING_SCOPE", error: `The token lacks scopes: ${missing.join(", ")}.`, required: missing }
    }))
  })
)
