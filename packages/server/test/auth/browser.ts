/**
 * Requests as a browser sends them to the test server, for the sign-in tests:
 * redirects not followed, the `herald_session` cookie sent by hand, the
 * answer's cookies read back.
 */
import { Effect } from "effect"
import { TestServer } from "../../../../test/support/server.ts"
import { SESSION_COOKIE } from "../../src/auth/SessionCookie.ts"

export interface Answer {
  readonly status: number
  readonly headers: Headers
  readonly cookies: ReadonlyArray<string>
  readonly body: any
}

export interface BrowseOptions {
  readonly method?: string
  readonly cookie?: string | undefined
  readonly headers?: Record<string, string>
  readonly json?: unknown
}

/** One request; a JSON body when `json` is given, the cookie when `cookie` is. */
export const browse = (path: string, options: BrowseOptions = {}) =>
  Effect.flatMap(TestServer, ({ baseUrl }) =>
    Effect.promise(async (): Promise<Answer> => {
      const headers: Record<string, string> = { ...options.headers }
      if (options.cookie !== undefined) headers.cookie = `${SESSION_COOKIE}=${options.cookie}`
      if (options.json !== undefined) headers["content-type"] = "application/json"
      const response = await fetch(`${baseUrl}${path}`, {
        method: options.method ?? (options.json === undefined ? "GET" : "POST"),
        redirect: "manual",
        headers,
        ...(options.json === undefined ? {} : { body: JSON.stringify(options.json) })
      })
      const text = await response.text()
      let body: unknown = text
      try {
        body = JSON.parse(text)
      } catch {
        // not JSON: the test reads the text
      }
      return { status: response.status, headers: response.headers, cookies: response.headers.getSetCookie(), body }
    }))

/** The session a `Set-Cookie: herald_session=…` carries (empty when it clears the cookie). */
export const sessionOf = (cookies: ReadonlyArray<string>): string | undefined => {
  const cookie = cookies.find((c) => c.startsWith(`${SESSION_COOKIE}=`))
  return cookie?.slice(SESSION_COOKIE.length + 1).split(";")[0]
}

/** A cookie's attributes, lower-cased and sorted. */
export const attributesOf = (cookie: string) => cookie.split(/;\s*/).slice(1).map((a) => a.toLowerCase()).sort()

/** The path and query of a URL Herald handed out (the test server listens elsewhere than the public URL). */
export const pathOf = (url: string) => {
  const u = new URL(url)
  return `${u.pathname}${u.search}`
}

/** The public origin of the test server's default configuration. */
export const PUBLIC_ORIGIN = "http://localhost:8080"
