/**
 * The rules of a person's sessions seen from a browser (issue 32): a sign-in
 * opens a session that expires with its cookie (30 days) and remembers the
 * user agent, so the person can tell their sessions apart; the person lists
 * their live sessions and revokes any of them. A revocation reaches this
 * node's credential cache at once and every other node's within a second
 * (Credentials.ts); "last used" is kept in memory and written at most once a
 * minute per session, so the list merges the fresher of the two.
 */
import { NotFound, SESSIONS_LISTED, SessionInfo, SessionList } from "@herald/api"
import { Context, Effect, Layer, Option } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import { makeId } from "../lib/Ids.ts"
import { Credentials } from "./Credentials.ts"
import { generateSecret, hashSecret } from "./Secrets.ts"
import { BROWSER_SESSION_SECONDS } from "./SessionCookie.ts"
import { SessionsRepo } from "./SessionsRepo.ts"

export interface Opened {
  readonly id: string
  /** The `hls_…` secret: the cookie's value, never stored. */
  readonly token: string
}

const later = (a: string | null, b: string | null) => a === null ? b : b === null ? a : Date.parse(a) >= Date.parse(b) ? a : b

export class BrowserSessions extends Context.Service<BrowserSessions, {
  /** A new session of the person, expiring with the browser cookie. */
  readonly open: (userId: string, userAgent: string | null) => Effect.Effect<Opened>
  readonly list: (userId: string, currentSessionId: string) => Effect.Effect<SessionList>
  readonly revoke: (userId: string, sessionId: string) => Effect.Effect<void, NotFound>
  /** Herald's public URL: the cookie's Secure flag and every redirect are built on it. */
  readonly publicUrl: string
  /** Its origin, which a browser request's `Origin` must equal. */
  readonly publicOrigin: string
}>()("herald/BrowserSessions") {
  static readonly layerNoDeps = Layer.effect(BrowserSessions, Effect.gen(function*() {
    const repo = yield* SessionsRepo
    const credentials = yield* Credentials
    const { publicUrl } = yield* AppConfig

    const open = Effect.fn("BrowserSessions.open")(function*(userId: string, userAgent: string | null) {
      const token = generateSecret("hls")
      const id = yield* makeId("ses")
      yield* repo.insert({ id, userId, tokenHash: hashSecret(token), userAgent, ttlSeconds: BROWSER_SESSION_SECONDS })
      return { id, token }
    })

    const list = Effect.fn("BrowserSessions.list")(function*(userId: string, currentSessionId: string) {
      const rows = yield* repo.listLive(userId, SESSIONS_LISTED)
      return new SessionList({
        items: rows.map((row) =>
          new SessionInfo({
            ...row,
            lastUsedAt: later(row.lastUsedAt, Option.getOrNull(Option.map(credentials.describe(row.id), (c) => c.lastUsedAt))),
            current: row.id === currentSessionId
          })
        )
      })
    })

    const revoke = Effect.fn("BrowserSessions.revoke")(function*(userId: string, sessionId: string) {
      const revoked = yield* repo.revokeOwn(userId, sessionId)
      if (Option.isNone(revoked)) return yield* new NotFound({ error: "Session not found." })
      credentials.evict(sessionId)
    })

    return BrowserSessions.of({ open, list, revoke, publicUrl, publicOrigin: new URL(publicUrl).origin })
  }))

  /** Needs Credentials (Identity.layer provides it) and SqlClient. */
  static readonly layer = BrowserSessions.layerNoDeps.pipe(
    Layer.provide(SessionsRepo.layer),
    Layer.provide(AppConfig.layer)
  )
}
