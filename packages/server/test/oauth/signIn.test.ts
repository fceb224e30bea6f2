/**
 * One-time sign-in links and `GET /oauth/sign-in`: a link signs a browser in
 * once (the `herald_session` cookie holds a new Person API session), `next`
 * is followed only to the authorization endpoint, an unknown, used or expired
 * link signs no one in, and a revoked session's cookie is no one.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Option } from "effect"
import { HttpServerRequest } from "effect/http"
import { SqlClient } from "effect/sql"
import { makePerson, rawFetch, TestServer, testServerLayer, uniqueEmail } from "../../../../test/support/server.ts"
import { Credentials } from "../../src/auth/Credentials.ts"
import { generateSecret, hashSecret } from "../../src/auth/Secrets.ts"
import { routes } from "../../src/http/Routes.ts"
import { Identity } from "../../src/identity/Identity.ts"
import { IdentityRepo } from "../../src/identity/IdentityRepo.ts"
import { SESSION_COOKIE, signedIn } from "../../src/oauth/BrowserSession.ts"
import { SIGN_IN_LINK_TTL_SECONDS, SignInLinks } from "../../src/oauth/SignInLinks.ts"

/** A GET as a browser sends it, redirects not followed. */
const browse = (path: string, cookie?: string) =>
  Effect.flatMap(TestServer, ({ baseUrl }) =>
    Effect.promise(async () => {
      const response = await fetch(`${baseUrl}${path}`, {
        redirect: "manual",
        headers: cookie === undefined ? {} : { cookie: `${SESSION_COOKIE}=${cookie}` }
      })
      return { status: response.status, headers: response.headers, cookies: response.headers.getSetCookie(), body: await response.text() }
    }))

/** The path of a link (the test server listens elsewhere than the public URL). */
const pathOf = (url: string) => {
  const u = new URL(url)
  return `${u.pathname}${u.search}`
}

/** The session a `Set-Cookie: herald_session=…` carries. */
const sessionOf = (cookies: ReadonlyArray<string>) => {
  const cookie = cookies.find((c) => c.startsWith(`${SESSION_COOKIE}=`))
  return cookie?.slice(SESSION_COOKIE.length + 1).split(";")[0]
}

/** The cookie's attributes, lower-cased and sorted. */
const attributesOf = (cookies: ReadonlyArray<string>) =>
  cookies[0]!.split(/;\s*/).slice(1).map((a) => a.toLowerCase()).sort()

const assertSafeHeaders = (headers: Headers) => {
  assert.strictEqual(headers.get("cache-control"), "no-store")
  assert.strictEqual(headers.get("referrer-policy"), "no-referrer")
  assert.strictEqual(headers.get("x-frame-options"), "DENY")
  assert.include(headers.get("content-security-policy") ?? "", "frame-ancestors 'none'")
}

/** Who a cookie signs in, as the consent page asks (oauth/BrowserSession.ts). */
const cookieSignsIn = (session: string) =>
  signedIn(HttpServerRequest.fromWeb(new Request("http://herald.test/oauth/authorize", { headers: { cookie: `${SESSION_COOKIE}=${session}` } })))

/** A fresh link's path for a new person. */
const freshLink = (next?: string) =>
  Effect.gen(function*() {
    const { person } = yield* makePerson("signer")
    const link = yield* (yield* SignInLinks).create(person.id, next)
    return { person, path: pathOf(link.url) }
  })

layer(testServerLayer(), { timeout: "60 seconds", excludeTestServices: true })("sign-in links", (it) => {
  it.effect("a link signs the browser in once: the session cookie, its attributes, a page naming the person", () =>
    Effect.gen(function*() {
      const links = yield* SignInLinks
      const person = yield* (yield* Identity).createUser({ email: uniqueEmail("ada"), name: "Ada <Lovelace>" })
      const link = yield* links.create(person.email)
      assert.strictEqual(link.userId, person.id)
      assert.match(link.url, /^http:\/\/localhost:8080\/oauth\/sign-in\?token=hll_[0-9A-Za-z]{49}$/)
      const lifetime = (Date.parse(link.expiresAt) - Date.now()) / 1000
      assert.isTrue(lifetime > SIGN_IN_LINK_TTL_SECONDS - 60 && lifetime <= SIGN_IN_LINK_TTL_SECONDS, String(lifetime))

      const first = yield* browse(pathOf(link.url))
      assert.strictEqual(first.status, 200)
      assert.include(first.headers.get("content-type") ?? "", "text/html")
      assertSafeHeaders(first.headers)
      // The name is the person's own choice: shown, never markup.
      assert.include(first.body, `Signed in as Ada &lt;Lovelace&gt; &lt;${person.email}&gt;`)
      assert.strictEqual(first.cookies.length, 1)
      // Path=/ (the console and the Person API read it too); Secure on http://localhost (a browser keeps it there).
      assert.deepStrictEqual(attributesOf(first.cookies), ["httponly", "max-age=2592000", "path=/", "samesite=lax", "secure"])
      const session = sessionOf(first.cookies)!
      assert.match(session, /^hls_/)

      // The cookie holds a Person API session of that person.
      assert.strictEqual(Option.getOrThrow(yield* cookieSignsIn(session)).userId, person.id)
      const me = yield* rawFetch("/api/app/me", { headers: { authorization: `Bearer ${session}` } })
      assert.deepStrictEqual([me.status, (me.body as { id: string }).id], [200, person.id])

      // Used: refused, and no new session.
      const again = yield* browse(pathOf(link.url), session)
      assert.strictEqual(again.status, 400)
      assertSafeHeaders(again.headers)
      assert.include(again.body, "This sign-in link does not work")
      assert.deepStrictEqual(again.cookies, [])
    }))

  it.effect("two browsers racing for one link: exactly one is signed in", () =>
    Effect.gen(function*() {
      const { path } = yield* freshLink()
      const results = yield* Effect.all(Array.from({ length: 4 }, () => browse(path)), { concurrency: "unbounded" })
      assert.deepStrictEqual(results.map((r) => r.status).sort(), [200, 400, 400, 400])
      assert.deepStrictEqual(results.map((r) => r.cookies.length).sort(), [0, 0, 0, 1])
    }))

  it.effect("next: followed (302, cookie set) only to an authorization request on this origin", () =>
    Effect.gen(function*() {
      const authorize = "/oauth/authorize?response_type=code&client_id=ocl_x&state=a%20b&redirect_uri=http%3A%2F%2F127.0.0.1%2Fcb"
      for (const next of [authorize, "/oauth/authorize"]) {
        const { path } = yield* freshLink(next)
        const followed = yield* browse(path)
        assert.strictEqual(followed.status, 302, next)
        assert.strictEqual(followed.headers.get("location"), next)
        assertSafeHeaders(followed.headers)
        assert.match(sessionOf(followed.cookies) ?? "", /^hls_/)
      }

      // Elsewhere: ignored (a link is never an open redirect); the browser is still signed in, on the page.
      const elsewhere = [
        "https://evil.example/oauth/authorize",
        "//evil.example/oauth/authorize",
        "/\\evil.example/oauth/authorize",
        "/oauth/authorizex",
        "/oauth/authorize/../../api/app/me",
        "/oauth/authorize?x=1\r\nset-cookie: a=b",
        "/api/app/me",
        "javascript:alert(1)",
        `/oauth/authorize?state=${"x".repeat(4000)}`,
        ""
      ]
      const { person } = yield* makePerson("elsewhere")
      const links = yield* SignInLinks
      for (const next of elsewhere) {
        // The CLI refuses such a next; a hand-edited link carries it anyway.
        const refused = yield* Effect.flip(links.create(person.id, next))
        assert.strictEqual(refused._tag, "ValidationFailed", next)
        const link = yield* links.create(person.id)
        const ignored = yield* browse(`${pathOf(link.url)}&next=${encodeURIComponent(next)}`)
        assert.strictEqual(ignored.status, 200, next)
        assert.isNull(ignored.headers.get("location"))
        assert.include(ignored.body, "Signed in as elsewhere")
        assert.match(sessionOf(ignored.cookies) ?? "", /^hls_/)
      }
    }))

  it.effect("an expired, unknown, malformed or missing link: 400, nobody signed in", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const { person } = yield* makePerson("late")
      const link = yield* (yield* SignInLinks).create(person.id)
      const token = new URL(link.url).searchParams.get("token")!
      yield* sql`UPDATE sign_in_links SET expires_at = now() - interval '1 second' WHERE token_hash = ${hashSecret(token)}`

      const session = (yield* makePerson("other")).session
      for (
        const path of [
          pathOf(link.url),
          `/oauth/sign-in?token=${generateSecret("hll")}`,
          `/oauth/sign-in?token=${session}`,
          `/oauth/sign-in?token=${token.slice(0, -1)}x`,
          `/oauth/sign-in?token=${"hll_".padEnd(5000, "a")}`,
          "/oauth/sign-in?token=",
          "/oauth/sign-in",
          "/oauth/sign-in?next=%2Foauth%2Fauthorize"
        ]
      ) {
        const refused = yield* browse(path)
        assert.strictEqual(refused.status, 400, path.slice(0, 80))
        assertSafeHeaders(refused.headers)
        assert.include(refused.body, "This sign-in link does not work")
        assert.deepStrictEqual(refused.cookies, [])
        assert.isNull(refused.headers.get("location"))
      }
      // The expired link stays unused (a sweep removes it), and nothing else was spent.
      const [row] = yield* sql<{ used: boolean }>`SELECT used_at IS NOT NULL AS used FROM sign_in_links WHERE token_hash = ${hashSecret(token)}`
      assert.strictEqual(row?.used, false)
    }))

  it.effect("a link's token never reaches a log line; other queries are shown as sent", () =>
    Effect.sync(() => {
      const token = generateSecret("hll")
      assert.deepStrictEqual(routes.find("GET", "/oauth/sign-in")?.route.secretQuery, ["token"])
      assert.strictEqual(
        routes.loggable(`/oauth/sign-in?token=${token}&next=%2Foauth%2Fauthorize%3Fstate%3Ds`, true),
        "/oauth/sign-in?token=…&next=%2Foauth%2Fauthorize%3Fstate%3Ds"
      )
      // The handler decodes names, so the log does too.
      assert.strictEqual(routes.loggable(`/oauth/sign-in?%74oken=${token}&token=${token}`, true), "/oauth/sign-in?token=…&token=…")
      assert.strictEqual(routes.loggable("/oauth/sign-in?next=%2Foauth%2Fauthorize", true), "/oauth/sign-in?next=%2Foauth%2Fauthorize")
      assert.strictEqual(routes.loggable("/oauth/authorize?client_id=ocl_x&state=a", true), "/oauth/authorize?client_id=ocl_x&state=a")
    }))

  it.effect("a link for no such person is refused when made", () =>
    Effect.gen(function*() {
      const refused = yield* Effect.flip((yield* SignInLinks).create("nobody-at-all@example.test"))
      assert.deepStrictEqual([refused._tag, refused.error], ["NotFound", "Person nobody-at-all@example.test not found."])
    }))

  it.effect("a revoked session's cookie signs no one in", () =>
    Effect.gen(function*() {
      const { path, person } = yield* freshLink()
      const session = sessionOf((yield* browse(path)).cookies)!
      const signed = Option.getOrThrow(yield* cookieSignsIn(session))
      assert.strictEqual(signed.userId, person.id)
      // The consent page of a registered client greets the cookie's person.
      const registered = yield* rawFetch("/oauth/register", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ client_name: "Sign-in test", redirect_uris: ["http://127.0.0.1:9/cb"], token_endpoint_auth_method: "none" })
      })
      assert.strictEqual(registered.status, 201)
      const authorize = `/oauth/authorize?${new URLSearchParams({
        response_type: "code",
        client_id: (registered.body as { client_id: string }).client_id,
        redirect_uri: "http://127.0.0.1:9/cb",
        code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
        code_challenge_method: "S256",
        state: "s"
      }).toString()}`
      const consent = yield* browse(authorize, session)
      assert.strictEqual(consent.status, 200)
      assert.include(consent.body, `Signed in as signer &lt;${person.email}&gt;`)

      yield* (yield* IdentityRepo).revokeSession(signed.sessionId)
      ;(yield* Credentials).evict(signed.sessionId)
      assert.isTrue(Option.isNone(yield* cookieSignsIn(session)))
      const signedOut = yield* browse(authorize, session)
      assert.strictEqual(signedOut.status, 200)
      assert.include(signedOut.body, "herald admin session link --user YOU --next")
      assert.notInclude(signedOut.body, person.email)

      // The page's command, run: its link signs the browser in again and returns it to this very request.
      const quoted = /--next (&#39;.*?&#39;)<\/code>/.exec(signedOut.body)![1]!
      const next = quoted.replace(/&#39;/g, "'").replace(/&amp;/g, "&").slice(1, -1)
      assert.strictEqual(next, authorize)
      const link = yield* (yield* SignInLinks).create(person.email, next)
      const back = yield* browse(pathOf(link.url))
      assert.deepStrictEqual([back.status, back.headers.get("location")], [302, authorize])
      const again = yield* browse(back.headers.get("location")!, sessionOf(back.cookies))
      assert.include(again.body, `Signed in as signer &lt;${person.email}&gt;`)
      const me = yield* rawFetch("/api/app/me", { headers: { authorization: `Bearer ${session}` } })
      assert.strictEqual(me.status, 401)
    }))
})

layer(testServerLayer({ HERALD_PUBLIC_URL: "https://herald.example/" }), { timeout: "60 seconds", excludeTestServices: true })(
  "sign-in links behind https",
  (it) => {
    it.effect("the link is on the public URL and the cookie is Secure", () =>
      Effect.gen(function*() {
        const { person } = yield* makePerson("secure")
        const link = yield* (yield* SignInLinks).create(person.email, "/oauth/authorize?client_id=ocl_y")
        assert.match(link.url, /^https:\/\/herald\.example\/oauth\/sign-in\?token=hll_[0-9A-Za-z]{49}&next=%2Foauth%2Fauthorize%3Fclient_id%3Docl_y$/)
        const signedIn = yield* browse(pathOf(link.url))
        assert.deepStrictEqual([signedIn.status, signedIn.headers.get("location")], [302, "/oauth/authorize?client_id=ocl_y"])
        assert.deepStrictEqual(attributesOf(signedIn.cookies), ["httponly", "max-age=2592000", "path=/", "samesite=lax", "secure"])
      }))
  }
)
