/**
 * A browser's Person API session travels in the `herald_session` cookie
 * (issue 32): set by a sign-in (an e-mailed link, a passkey, `herald admin
 * session link`), read by the Person API's middleware when no bearer token is
 * sent, and by the OAuth consent page. What makes a cookie safe to
 * authenticate changes with lives here too: the CSRF rule.
 */
import { CsrfRejected, SESSION_COOKIE } from "@herald/api"
import { HttpServerResponse } from "effect/http"
import type { Cookies, HttpServerRequest } from "effect/http"

export { SESSION_COOKIE }

/** A browser session lasts this long (the cookie's Max-Age and the session's expiry). */
export const BROWSER_SESSION_DAYS = 30
export const BROWSER_SESSION_SECONDS = BROWSER_SESSION_DAYS * 24 * 60 * 60

/** Hosts a browser counts as a secure context over plain http (it keeps `Secure` cookies from them). */
const isLoopbackHost = (hostname: string) =>
  hostname === "localhost" || hostname.endsWith(".localhost") || hostname === "[::1]" || /^127(\.\d{1,3}){3}$/.test(hostname)

/**
 * The cookie's `Set-Cookie` options for a public URL: HttpOnly, SameSite=Lax,
 * Path=/, Max-Age 30 days; Secure unless the public URL is plain http on a
 * non-loopback host (a browser drops a Secure cookie set over such http).
 */
export const sessionCookieOptions = (publicUrl: string): Cookies.Cookie["options"] => {
  const url = new URL(publicUrl)
  return {
    httpOnly: true,
    sameSite: "lax",
    path: "/",
    secure: url.protocol === "https:" || isLoopbackHost(url.hostname),
    maxAge: `${BROWSER_SESSION_DAYS} days`
  }
}

/** `response` setting the session cookie to `token`. */
export const withSessionCookie = (response: HttpServerResponse.HttpServerResponse, token: string, publicUrl: string) =>
  HttpServerResponse.setCookieUnsafe(response, SESSION_COOKIE, token, sessionCookieOptions(publicUrl))

/** `response` clearing the session cookie (same name, path and flags, expired). */
export const withoutSessionCookie = (response: HttpServerResponse.HttpServerResponse, publicUrl: string) => {
  const { expires: _expires, maxAge: _maxAge, ...options } = sessionCookieOptions(publicUrl) ?? {}
  return HttpServerResponse.expireCookieUnsafe(response, SESSION_COOKIE, options)
}

/** The request's session cookie, if it sent a non-empty one. */
export const sessionCookieOf = (request: HttpServerRequest.HttpServerRequest): string | undefined => {
  const cookie = request.cookies[SESSION_COOKIE]
  return cookie === undefined || cookie === "" ? undefined : cookie
}

/** The longest `User-Agent` kept with a session. */
export const USER_AGENT_MAX = 300

/** The request's `User-Agent` as kept with a session: printable, one line, bounded; none when absent. */
export const userAgentOf = (request: HttpServerRequest.HttpServerRequest): string | null => {
  const raw = request.headers["user-agent"]
  if (raw === undefined) return null
  const text = raw.replace(/[^\x20-\x7e]/g, "").trim().slice(0, USER_AGENT_MAX)
  return text === "" ? null : text
}

const safeMethods = new Set(["GET", "HEAD", "OPTIONS"])

/**
 * The refusal of a cookie-authenticated request, or undefined when it may go on.
 * A change (any method but GET, HEAD, OPTIONS) must send `X-Herald-CSRF` — a
 * page of another origin cannot without a CORS preflight, which Herald never
 * grants — and any request that sends `Origin` must send Herald's own.
 */
export const csrfRefusal = (request: HttpServerRequest.HttpServerRequest, publicOrigin: string): CsrfRejected | undefined => {
  const origin = request.headers["origin"]
  if (origin !== undefined && origin !== publicOrigin) return foreignOrigin
  if (safeMethods.has(request.method)) return undefined
  const header = request.headers["x-herald-csrf"]
  return header === undefined || header.trim() === "" ? missingHeader : undefined
}

/** The refusal of a sign-in request (no session yet) that names another origin; undefined otherwise. */
export const originRefusal = (request: HttpServerRequest.HttpServerRequest, publicOrigin: string): CsrfRejected | undefined => {
  const origin = request.headers["origin"]
  return origin !== undefined && origin !== publicOrigin ? foreignOrigin : undefined
}

const foreignOrigin = new CsrfRejected({
  error: "Refused: the request comes from a page of another origin than Herald's public URL (HERALD_PUBLIC_URL)."
})
const missingHeader = new CsrfRejected({
  error: "Refused: a request signed in by the session cookie that changes something must send the X-Herald-CSRF header."
})
