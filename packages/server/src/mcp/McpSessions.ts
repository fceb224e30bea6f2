/**
 * The MCP sessions of this node, by the token that opened them. Effect's MCP
 * runtime keeps a session until the client sends DELETE; this registry bounds
 * them (McpAuth.ts reports every request to it):
 *
 * - Ownership: a session answers only the token (the grant, for OAuth) that
 *   opened it; another token's request with its id is answered as an unknown
 *   session (404), so an id is worth nothing without its token.
 * - A cap: at most `MAX_SESSIONS_PER_TOKEN` per token; opening one more ends
 *   the token's least recently used session.
 * - Idle expiry: the sweep (a worker, every minute) ends sessions unused for
 *   `SESSION_IDLE_TIMEOUT`, and every session of a token that no longer
 *   stands (revoked or expired): the credential cache drops a revoked token
 *   within a second, and only tokens it no longer holds are asked of the
 *   database.
 *
 * Ending a session from the server is the client's own DELETE: the MCP
 * runtime's DELETE handler, captured when `McpServer.layerHttp` registers it
 * (`capturingTermination`), run with a synthetic request carrying the id, so
 * the runtime forgets the session and interrupts its in-flight requests.
 */
import { Clock, Context, Duration, Effect, Layer, Metric } from "effect"
import { HttpRouter, HttpServerRequest } from "effect/http"
import type { HttpServerResponse } from "effect/http"
import { Credentials } from "../auth/Credentials.ts"
import { MCP_PATH } from "../oauth/McpScopes.ts"
import { McpSessionsRepo } from "./McpSessionsRepo.ts"

/** Live sessions one token may hold on a node; opening one more ends its least recently used. */
export const MAX_SESSIONS_PER_TOKEN = 16
/** A session unused this long is ended by the sweep. */
export const SESSION_IDLE_TIMEOUT = Duration.minutes(30)
/** How often the sweep runs (runtime/Workers.ts). */
export const SESSION_SWEEP_EVERY = Duration.minutes(1)

export const SESSION_ID_HEADER = "mcp-session-id"

const liveSessions = Metric.gauge("herald_mcp_sessions", { description: "Live MCP sessions on this node." })

interface Entry {
  readonly tokenId: string
  lastSeenMs: number
}

/** The MCP runtime's DELETE route handler (it reads the request from the context). */
type Termination = Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, HttpServerRequest.HttpServerRequest>

export class McpSessions extends Context.Service<McpSessions, {
  /** The token that opened a session, or undefined for a session this node does not know. */
  readonly ownerOf: (sessionId: string) => string | undefined
  /** Registers a session `initialize` just opened; past the cap, ends the token's least recently used one. */
  readonly opened: (sessionId: string, tokenId: string) => Effect.Effect<void>
  /** Records a use of a session now (the `Clock`'s now). */
  readonly touch: (sessionId: string) => Effect.Effect<void>
  /** Forgets a session the runtime already ended (the client's DELETE). */
  readonly forget: (sessionId: string) => void
  /** Ends a session from the server: the runtime forgets it, its next request answers 404. */
  readonly end: (sessionId: string) => Effect.Effect<void>
  /** Live sessions: all of this node's, or one token's. */
  readonly count: (tokenId?: string) => number
  /** One pass: ends idle sessions and those of tokens that no longer stand; answers how many of each. */
  readonly sweep: Effect.Effect<{ readonly idle: number; readonly revoked: number }>
  readonly every: Duration.Duration
  /** Set once, by `capturingTermination`, when the MCP routes are registered. */
  readonly setTermination: (handler: Termination) => void
}>()("herald/mcp/McpSessions") {
  static readonly layerNoDeps = Layer.effect(McpSessions, Effect.gen(function*() {
    const credentials = yield* Credentials
    const repo = yield* McpSessionsRepo
    const sessions = new Map<string, Entry>()
    const byToken = new Map<string, Set<string>>()
    let termination: Termination | undefined
    const idleMs = Duration.toMillis(SESSION_IDLE_TIMEOUT)

    const publish = Effect.suspend(() => Metric.update(liveSessions, sessions.size))

    const forget = (sessionId: string) => {
      const entry = sessions.get(sessionId)
      if (entry === undefined) return
      sessions.delete(sessionId)
      const ids = byToken.get(entry.tokenId)
      ids?.delete(sessionId)
      if (ids?.size === 0) byToken.delete(entry.tokenId)
    }

    // The URL is never routed: the handler reads only the headers.
    const terminationRequest = (sessionId: string) =>
      HttpServerRequest.fromWeb(new Request(`http://herald.internal${MCP_PATH}`, {
        method: "DELETE",
        headers: { [SESSION_ID_HEADER]: sessionId }
      }))

    const end = (sessionId: string): Effect.Effect<void> =>
      Effect.suspend(() => {
        forget(sessionId)
        if (termination === undefined) return Effect.die(new Error("the MCP session termination route was never registered"))
        return termination.pipe(
          Effect.provideService(HttpServerRequest.HttpServerRequest, terminationRequest(sessionId)),
          Effect.catchCause((cause) => Effect.logWarning("ending an MCP session failed", cause)),
          Effect.asVoid
        )
      })

    const opened = (sessionId: string, tokenId: string) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        sessions.set(sessionId, { tokenId, lastSeenMs: now })
        const ids = byToken.get(tokenId) ?? new Set<string>()
        ids.add(sessionId)
        byToken.set(tokenId, ids)
        if (ids.size <= MAX_SESSIONS_PER_TOKEN) return publish
        // Least recently used; on a tie, the first registered (a Set keeps insertion order).
        let oldest: string | undefined
        for (const id of ids) {
          if (oldest === undefined || sessions.get(id)!.lastSeenMs < sessions.get(oldest)!.lastSeenMs) oldest = id
        }
        return Effect.andThen(end(oldest!), publish)
      })

    const touch = (sessionId: string) =>
      Effect.map(Clock.currentTimeMillis, (now) => {
        const entry = sessions.get(sessionId)
        if (entry !== undefined && now > entry.lastSeenMs) entry.lastSeenMs = now
      })

    // A token the cache still holds stands (a revocation evicts it); the others are asked of the database.
    const fallenTokens = Effect.gen(function*() {
      const unsure = [...byToken.keys()].filter((tokenId) => credentials.describe(tokenId)._tag === "None")
      if (unsure.length === 0) return []
      const standing = yield* repo.standing(unsure)
      return unsure.filter((tokenId) => !standing.has(tokenId))
    })

    const sweep = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const idle = [...sessions].filter(([, entry]) => now - entry.lastSeenMs >= idleMs).map(([id]) => id)
      yield* Effect.forEach(idle, end, { discard: true })
      const fallen = yield* fallenTokens
      const revoked = fallen.flatMap((tokenId) => [...(byToken.get(tokenId) ?? [])])
      yield* Effect.forEach(revoked, end, { discard: true })
      yield* publish
      if (idle.length + revoked.length > 0) {
        yield* Effect.logDebug("mcp session sweep").pipe(Effect.annotateLogs({ idle: idle.length, revoked: revoked.length }))
      }
      return { idle: idle.length, revoked: revoked.length }
    }).pipe(Effect.withSpan("McpSessions.sweep"))

    return McpSessions.of({
      ownerOf: (sessionId) => sessions.get(sessionId)?.tokenId,
      opened,
      touch,
      forget,
      end: (sessionId) => Effect.andThen(end(sessionId), publish),
      count: (tokenId) => tokenId === undefined ? sessions.size : byToken.get(tokenId)?.size ?? 0,
      sweep,
      every: SESSION_SWEEP_EVERY,
      setTermination: (handler) => {
        termination = handler
      }
    })
  }))

  /** Needs `Credentials` and `SqlClient`. */
  static readonly layer = McpSessions.layerNoDeps.pipe(Layer.provide(McpSessionsRepo.layer))

  /**
   * The router `McpServer.layerHttp` registers its routes with: the real one,
   * except that the DELETE handler of the MCP path is kept (before any
   * middleware) as the way to end a session from the server.
   */
  static readonly capturingTermination = Layer.effect(HttpRouter.HttpRouter)(Effect.gen(function*() {
    const router = yield* HttpRouter.HttpRouter
    const sessions = yield* McpSessions
    return HttpRouter.HttpRouter.of({
      ...router,
      add: (method, path, handler, options) => {
        if (method === "DELETE" && path === MCP_PATH) {
          sessions.setTermination(HttpRouter.route(method, path, handler).handler as Termination)
        }
        return router.add(method, path, handler, options)
      }
    })
  }))
}
