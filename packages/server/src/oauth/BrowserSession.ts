/**
 * The signed-in person of a browser request (the OAuth consent page): a
 * Person API session carried by the `herald_session` cookie, which any
 * browser sign-in sets (an e-mailed link, a passkey, `herald admin session
 * link`; auth/SessionCookie.ts), or sent as `Authorization: Bearer hls_…` by
 * a script. Either is checked exactly as the Person API checks a session
 * (auth/Credentials.ts), so a revoked or expired session signs no one in.
 */
import { Effect, Option } from "effect"
import { HttpServerRequest } from "effect/http"
import { Credentials } from "../auth/Credentials.ts"
import { SESSION_COOKIE, sessionCookieOf, sessionCookieOptions } from "../auth/SessionCookie.ts"

export { SESSION_COOKIE, sessionCookieOptions }

export interface SignedIn {
  readonly userId: string
  readonly sessionId: string
}

/** The session token of a request: its cookie first, else a bearer session token. */
export const sessionTokenOf = (request: HttpServerRequest.HttpServerRequest): string | undefined => {
  const cookie = sessionCookieOf(request)
  if (cookie !== undefined) return cookie
  const authorization = request.headers["authorization"]
  if (authorization !== undefined && authorization.startsWith("Bearer hls_")) return authorization.slice("Bearer ".length)
  return undefined
}

/** Who is signed in on this request, if anyone (an unknown, revoked or expired session is no one). */
export const signedIn = (request: HttpServerRequest.HttpServerRequest): Effect.Effect<Option.Option<SignedIn>, never, Credentials> =>
  Effect.gen(function*() {
    const token = sessionTokenOf(request)
    if (token === undefined) return Option.none()
    const credentials = yield* Credentials
    return yield* credentials.authenticateSession(token).pipe(
      Effect.map((session) => Option.some({ userId: session.userId, sessionId: session.id })),
      Effect.catch(() => Effect.succeed(Option.none<SignedIn>()))
    )
  })
