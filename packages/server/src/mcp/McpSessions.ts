/**
 * The MCP sessions of the 2025 protocol revisions (`Mcp-Session-Id`), kept
 * where every node reads them (PostgreSQL, McpSessionsRepo.ts): a session
 * opened on one node is answered on any other, and outlives a restart of the
 * node that opened it. McpAuth.ts reports every request to it:
 *
 * - Ownership: a session answers only the token (the grant, for OAuth) that
 *   opened it; another token's request with its id is answered as an unknown
 *   session (404), so an id is worth nothing without its token. Checked in
 *   the database on every request, in the statement that records the use.
 * - Resuming: Effect's MCP runtime holds a session in one process's memory.
 *   A node asked about a session its runtime does not hold opens it there
 *   from what the session negotiated (McpRuntimeRoutes.ts), under an id of
 *   the runtime's own, and the session's requests reach the runtime with that
 *   id. A session the database does not hold is unknown on every node: 404,
 *   and the client initialises again, as Streamable HTTP says.
 * - A cap: at most `MAX_SESSIONS_PER_TOKEN` per token over all nodes; opening
 *   one more ends the token's least recently used session.
 * - Idle expiry: the sweep (a worker on every node, every minute) ends the
 *   sessions no node has used for `SESSION_IDLE_TIMEOUT`, and every session
 *   of a token that no longer stands (revoked or expired); then this node lets
 *   go of its runtime's copies of sessions ended anywhere, and of those it has
 *   not served for as long (another node may still serve them).
 *
 * Ending a session's copy here is the client's own DELETE, run by the
 * runtime's DELETE handler with the runtime's id (`capturingRoutes` keeps the
 * handlers), so the runtime forgets it and interrupts its in-flight requests.
 * A copy on another node goes at that node's next request for the session, or
 * its next sweep.
 */
import { Clock, Context, Duration, Effect, Layer, Metric, Semaphore } from "effect"
import { HttpRouter } from "effect/http"
import { MCP_PATH } from "../oauth/McpScopes.ts"
import { endSession, openSession } from "./McpRuntimeRoutes.ts"
import type { RuntimeRoute, RuntimeRoutes } from "./McpRuntimeRoutes.ts"
import { McpSessionsRepo } from "./McpSessionsRepo.ts"
import type { Resumable } from "./McpSessionsRepo.ts"

export { SESSION_ID_HEADER } from "./McpRuntimeRoutes.ts"

/** Live sessions one token may hold over all nodes; opening one more ends its least recently used. */
export const MAX_SESSIONS_PER_TOKEN = 16
/** A session no node has used this long is ended by the sweep. */
export const SESSION_IDLE_TIMEOUT = Duration.minutes(30)
/** How often the sweep runs (runtime/Workers.ts). */
export const SESSION_SWEEP_EVERY = Duration.minutes(1)

const heldSessions = Metric.gauge("herald_mcp_sessions", {
  description: "MCP sessions held by this node's MCP runtime (opened or resumed here)."
})

/** A session this node's runtime holds. */
interface Held {
  readonly tokenId: string
  /** The runtime's id for it: the session's own where it was opened, one minted here where it was resumed. */
  readonly runtimeId: string
  lastSeenMs: number
}

export class McpSessions extends Context.Service<McpSessions, {
  /** The token of a session this node's runtime holds, or undefined. */
  readonly ownerOf: (sessionId: string) => string | undefined
  /** Records a session `initialize` just opened here (and what resumes it elsewhere); past the cap, ends the token's least recently used one. */
  readonly opened: (sessionId: string, tokenId: string, resume?: Resumable) => Effect.Effect<void>
  /**
   * A request of a token in a session: records the use, and answers the id
   * this node's runtime knows the session by (resuming it here if need be), or
   * undefined when the token holds no such session anywhere.
   */
  readonly admit: (sessionId: string, tokenId: string) => Effect.Effect<string | undefined>
  /** Records a use of a session now (the `Clock`'s now). */
  readonly touch: (sessionId: string) => Effect.Effect<void>
  /** The runtime here ended the session at the client's DELETE: it ends everywhere. */
  readonly closed: (sessionId: string) => Effect.Effect<void>
  /** The runtime here answered that it does not hold the session: this node forgets its copy. */
  readonly lost: (sessionId: string) => Effect.Effect<void>
  /** Ends a session from the server: on every node, its next request answers 404. */
  readonly end: (sessionId: string) => Effect.Effect<void>
  /** Sessions this node's runtime holds: all, or one token's. */
  readonly count: (tokenId?: string) => number
  /** One pass: ends idle sessions and those of tokens that no longer stand; answers how many of each. */
  readonly sweep: Effect.Effect<{ readonly idle: number; readonly revoked: number }>
  readonly every: Duration.Duration
  /** Set once per method, by `capturingRoutes`, when the MCP routes are registered. */
  readonly setRoute: (method: "POST" | "DELETE", handler: RuntimeRoute) => void
}>()("herald/McpSessions") {
  static readonly layerNoDeps = Layer.effect(McpSessions, Effect.gen(function*() {
    const repo = yield* McpSessionsRepo
    const held = new Map<string, Held>()
    const byToken = new Map<string, Set<string>>()
    const routes: { post?: RuntimeRoute; delete?: RuntimeRoute } = {}
    // One resume at a time on a node: two requests of one session must not open two copies.
    const resuming = yield* Semaphore.make(1)
    const idleMs = Duration.toMillis(SESSION_IDLE_TIMEOUT)

    const publish = Effect.suspend(() => Metric.update(heldSessions, held.size))

    const runtime = (): RuntimeRoutes => {
      if (routes.post === undefined || routes.delete === undefined) {
        throw new Error("the MCP runtime's routes were never registered")
      }
      return { post: routes.post, delete: routes.delete }
    }

    const release = (sessionId: string): Held | undefined => {
      const entry = held.get(sessionId)
      if (entry === undefined) return undefined
      held.delete(sessionId)
      const ids = byToken.get(entry.tokenId)
      ids?.delete(sessionId)
      if (ids?.size === 0) byToken.delete(entry.tokenId)
      return entry
    }

    const hold = (sessionId: string, entry: Held) => {
      release(sessionId)
      held.set(sessionId, entry)
      const ids = byToken.get(entry.tokenId) ?? new Set<string>()
      ids.add(sessionId)
      byToken.set(entry.tokenId, ids)
    }

    /** Ends this node's runtime copy of a session; the database is left as it is. */
    const letGo = (sessionId: string): Effect.Effect<void> =>
      Effect.suspend(() => {
        const entry = release(sessionId)
        return entry === undefined ? Effect.void : Effect.andThen(Effect.sync(runtime), (r) => endSession(r.delete, entry.runtimeId))
      })

    const end = (sessionId: string) => Effect.andThen(repo.remove(sessionId), letGo(sessionId))

    const opened = (sessionId: string, tokenId: string, resume?: Resumable) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        yield* repo.open({ id: sessionId, tokenId, resume, nowMs: now })
        hold(sessionId, { tokenId, runtimeId: sessionId, lastSeenMs: now })
        const evicted = yield* repo.evictBeyond(tokenId, MAX_SESSIONS_PER_TOKEN)
        yield* Effect.forEach(evicted, letGo, { discard: true })
        yield* publish
      })

    const resumeHere = (sessionId: string, tokenId: string, resume: Resumable, now: number) =>
      Semaphore.withPermit(resuming)(Effect.gen(function*() {
        const meanwhile = held.get(sessionId)
        if (meanwhile !== undefined && meanwhile.tokenId === tokenId) return meanwhile.runtimeId
        const runtimeId = yield* Effect.flatMap(Effect.sync(runtime), (r) => openSession(r.post, resume)).pipe(
          Effect.catchCause((cause) => Effect.as(Effect.logWarning("resuming an MCP session failed", cause), undefined))
        )
        if (runtimeId === undefined) return undefined
        hold(sessionId, { tokenId, runtimeId, lastSeenMs: now })
        yield* publish
        return runtimeId
      })).pipe(Effect.withSpan("McpSessions.resume"))

    const admit = (sessionId: string, tokenId: string) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const stored = yield* repo.use(sessionId, tokenId, now)
        const entry = held.get(sessionId)
        if (stored === undefined) {
          // Ended on another node: this node's copy goes too (another token's request leaves it be).
          if (entry !== undefined && entry.tokenId === tokenId) yield* Effect.andThen(letGo(sessionId), publish)
          return undefined
        }
        if (entry !== undefined && entry.tokenId === tokenId) {
          if (now > entry.lastSeenMs) entry.lastSeenMs = now
          return entry.runtimeId
        }
        // Opened elsewhere (or before this node restarted): resumed here, when what resumes it was kept.
        return stored.resume === null ? undefined : yield* resumeHere(sessionId, tokenId, stored.resume, now)
      })

    const touch = (sessionId: string) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const entry = held.get(sessionId)
        if (entry !== undefined && now > entry.lastSeenMs) entry.lastSeenMs = now
        return repo.touch(sessionId, now)
      })

    const sweep = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const idle = yield* repo.removeIdle(now - idleMs)
      const revoked = yield* repo.removeFallen
      // This node's copies: of sessions ended anywhere, and of those it has not served for the idle time.
      const mine = [...held.keys()]
      const alive = yield* repo.existing(mine)
      const stale = mine.filter((id) => {
        const entry = held.get(id)
        return entry !== undefined && (!alive.has(id) || now - entry.lastSeenMs >= idleMs)
      })
      yield* Effect.forEach(stale, letGo, { discard: true })
      yield* publish
      if (idle.length + revoked.length + stale.length > 0) {
        yield* Effect.logDebug("mcp session sweep").pipe(
          Effect.annotateLogs({ idle: idle.length, revoked: revoked.length, released: stale.length })
        )
      }
      return { idle: idle.length, revoked: revoked.length }
    }).pipe(Effect.withSpan("McpSessions.sweep"))

    return McpSessions.of({
      ownerOf: (sessionId) => held.get(sessionId)?.tokenId,
      opened,
      admit,
      touch,
      closed: (sessionId) => Effect.andThen(repo.remove(sessionId), Effect.andThen(Effect.sync(() => release(sessionId)), publish)),
      lost: (sessionId) => Effect.andThen(Effect.sync(() => release(sessionId)), publish),
      end: (sessionId) => Effect.andThen(end(sessionId), publish),
      count: (tokenId) => tokenId === undefined ? held.size : byToken.get(tokenId)?.size ?? 0,
      sweep,
      every: SESSION_SWEEP_EVERY,
      setRoute: (method, handler) => {
        if (method === "POST") routes.post = handler
        else routes.delete = handler
      }
    })
  }))

  /** Needs `SqlClient`. */
  static readonly layer = McpSessions.layerNoDeps.pipe(Layer.provide(McpSessionsRepo.layer))

  /**
   * The router `McpServer.layerHttp` registers its routes with: the real one,
   * except that the POST and DELETE handlers of the MCP path are kept (before
   * any middleware), to open a session resumed here and to end one.
   */
  static readonly capturingRoutes = Layer.effect(HttpRouter.HttpRouter)(Effect.gen(function*() {
    const router = yield* HttpRouter.HttpRouter
    const sessions = yield* McpSessions
    return HttpRouter.HttpRouter.of({
      ...router,
      add: (method, path, handler, options) => {
        if ((method === "POST" || method === "DELETE") && path === MCP_PATH) {
          sessions.setRoute(method, HttpRouter.route(method, path, handler).handler as RuntimeRoute)
        }
        return router.add(method, path, handler, options)
      }
    })
  }))
}
