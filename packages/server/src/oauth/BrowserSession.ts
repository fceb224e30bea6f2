/**
 * The signed-in person of a browser request (the OAuth consent page): a
 * Person API session carried by the `herald_session` cookie, which a
 * one-time sign-in link sets (`herald admin session link`), or sent as
 * `Authorization: Bearer hls_…` by a script. Either is checked exactly as the
 * Person API checks a session (auth/Credentials.ts), so a revoked or expired
 * session signs no one in.
 */
import { Effect, Option } from "effect"
import { Cookies, HttpServerRequest } from "effect/http"
import { Credentials } from "../auth/Credentials.ts"

/** The cookie's name; HttpOnly, SameSite=Lax, Path=/oauth, Secure when the public URL is https. */
export const SESSION_COOKIE = "herald_session"

export interface SignedIn {
  readonly userId: string
  readonly sessionId: string
}

/** The session token of a request: its cookie first, else a bearer session token. */
export const sessionTokenOf = (request: HttpServerRequest.HttpServerRequest): string | undefined => {
  const cookie = request.cookies[SESSION_COOKIE]
  if (cookie !== undefined && cookie !== "") return cookie
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

/** The `Set-Cookie` options of the session cookie, for a public URL. */
export const sessionCookieOptions = (publicUrl: string): Cookies.Cookie["options"] => ({
  httpOnly: true,
  sameSite: "lax",
  path: "/oauth",
  secure: publicUrl.startsWith("https:"),
  maxAge: "30 days"
})
