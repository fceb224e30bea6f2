/**
 * Sign-in by an e-mailed link (issue 32), over HTTP against the whole service,
 * its mail sent through a real SMTP server run here: the link arrives, signs
 * the browser in once (the `herald_session` cookie, which the Person API
 * takes), lands on `next` only when it is a local path; an address without an
 * account gets the same answer and no mail; each address gets at most 5 links
 * per 15 minutes, whoever asks; without SMTP the link is in the log.
 */
import { assert, layer } from "@effect/vitest"
import { SIGN_IN_EMAILS_PER_WINDOW } from "@herald/api"
import { Effect, Layer, Logger } from "effect"
import { testServerLayer, uniqueEmail } from "../../../../test/support/server.ts"
import { eventually } from "../../../../test/support/eventually.ts"
import { routes } from "../../src/http/Routes.ts"
import { Identity } from "../../src/identity/Identity.ts"
import { attributesOf, browse, pathOf, PUBLIC_ORIGIN, sessionOf } from "./browser.ts"
import { Smtp, smtpUrl } from "./smtp.ts"

const LINK = /http:\/\/localhost:8080\/api\/app\/auth\/link\?token=hll_[0-9A-Za-z]{49}(?:&next=[^\s]+)?/

/** The service with its mail going to the test SMTP server (per-address limits off: the per-e-mail limit is tested alone). */
const WithSmtp = Layer.unwrap(Effect.map(Smtp, (smtp) =>
  testServerLayer({
    HERALD_SMTP_URL: smtpUrl(smtp.port),
    HERALD_SMTP_FROM: "Herald Test <herald@example.test>",
    HERALD_ADDRESS_LIMIT_SIGN_IN_PER_MINUTE: "0"
  }))).pipe(Layer.provideMerge(Smtp.layer))

const newPerson = (name: string) => Effect.orDie((Effect.flatMap(Identity, (identity) => identity.createUser({ email: uniqueEmail(name), name }))))

const askLink = (email: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
  browse("/api/app/auth/email-link", { json: { email, ...extra }, headers })

/** The one mail to `address`, once it has arrived. */
const mailTo = (address: string) =>
  Effect.flatMap(Smtp, (smtp) => Effect.map(eventually(Effect.sync(() => smtp.to(address)), (m) => m.length > 0), (m) => m[0]!))

layer(WithSmtp, { timeout: "60 seconds", excludeTestServices: true })("e-mailed sign-in links", (it) => {
  it.effect("a link mailed through SMTP signs the browser in once, into the cookie the Person API takes", () =>
    Effect.gen(function*() {
      const person = yield* newPerson("Ada")
      const asked = yield* askLink(person.email, { next: "/inbox?tab=prompts" })
      assert.deepStrictEqual([asked.status, asked.body, asked.cookies], [202, { sent: true }, []])

      const mail = yield* mailTo(person.email)
      assert.strictEqual(mail.from, "herald@example.test")
      assert.deepStrictEqual(mail.to, [person.email])
      assert.strictEqual(mail.headers["subject"], "Sign in to Herald")
      assert.include(mail.headers["from"] ?? "", "Herald Test")
      assert.include(mail.text, "Hello Ada,")
      assert.include(mail.text, "It works once, within 15 minutes.")
      assert.include(mail.text, "If you did not ask to sign in, ignore this mail")
      const url = LINK.exec(mail.text)?.[0]
      assert.isDefined(url, mail.text)
      assert.strictEqual(new URL(url!).searchParams.get("next"), "/inbox?tab=prompts")

      const opened = yield* browse(pathOf(url!))
      assert.strictEqual(opened.status, 302)
      assert.strictEqual(opened.headers.get("location"), "/inbox?tab=prompts")
      assert.strictEqual(opened.headers.get("referrer-policy"), "no-referrer")
      assert.strictEqual(opened.headers.get("cache-control"), "no-store")
      assert.strictEqual(opened.cookies.length, 1)
      assert.deepStrictEqual(attributesOf(opened.cookies[0]!), ["httponly", "max-age=2592000", "path=/", "samesite=lax", "secure"])
      const session = sessionOf(opened.cookies)!
      assert.match(session, /^hls_/)

      // The cookie alone is a Person API session.
      const me = yield* browse("/api/app/me", { cookie: session })
      assert.deepStrictEqual([me.status, me.body], [200, { id: person.id, email: person.email, name: "Ada" }])

      // The token never reaches a log line.
      assert.strictEqual(routes.loggable(pathOf(url!), true), "/api/app/auth/link?token=…&next=%2Finbox%3Ftab%3Dprompts")

      // Used: refused, back to the sign-in page with the reason, nobody signed in.
      const again = yield* browse(pathOf(url!))
      assert.deepStrictEqual([again.status, again.headers.get("location"), again.cookies], [302, "/sign-in?error=link", []])
    }))

  it.effect("an address without an account gets the same answer and no mail; any case of a known address works", () =>
    Effect.gen(function*() {
      const smtp = yield* Smtp
      const nobody = uniqueEmail("nobody")
      const person = yield* newPerson("Grace")
      const unknown = yield* askLink(nobody)
      const known = yield* askLink(person.email.toUpperCase())
      assert.deepStrictEqual([unknown.status, unknown.body], [known.status, known.body])
      assert.deepStrictEqual([unknown.status, unknown.body], [202, { sent: true }])
      // Both were queued in that order: once the known one's mail is in, the unknown one was handled (no mail).
      const mail = yield* mailTo(person.email)
      assert.deepStrictEqual(mail.to, [person.email])
      assert.deepStrictEqual(smtp.to(nobody), [])
      assert.isFalse(smtp.mails.some((m) => m.to.some((to) => to.toLowerCase() === nobody)))
    }))

  it.effect(`each address: at most ${SIGN_IN_EMAILS_PER_WINDOW} links per 15 minutes, whoever asks, account or not`, () =>
    Effect.gen(function*() {
      const smtp = yield* Smtp
      const person = yield* newPerson("Limited")
      const nobody = uniqueEmail("nobody")
      for (const email of [person.email, nobody]) {
        for (let i = 0; i < SIGN_IN_EMAILS_PER_WINDOW; i++) {
          // Any case counts against the one address.
          assert.strictEqual((yield* askLink(i % 2 === 0 ? email : email.toUpperCase())).status, 202)
        }
        const refused = yield* askLink(email)
        assert.strictEqual(refused.status, 429)
        assert.strictEqual(refused.body.code, "RATE_LIMITED")
        assert.include(refused.body.error, "at most 5 per 15 minutes")
        const retryAfter = Number(refused.headers.get("retry-after"))
        assert.isTrue(retryAfter >= 1 && retryAfter <= 900, String(retryAfter))
      }
      // Another address is unaffected.
      assert.strictEqual((yield* askLink(uniqueEmail("other"))).status, 202)
      yield* eventually(Effect.sync(() => smtp.to(person.email)), (m) => m.length === SIGN_IN_EMAILS_PER_WINDOW)
    }))

  it.effect("a malformed address answers 400; a request from another origin 403 CSRF_REJECTED; unknown fields 400", () =>
    Effect.gen(function*() {
      const smtp = yield* Smtp
      for (const email of ["not-an-address", "a@b", "x".repeat(250) + "@example.test"]) {
        const refused = yield* askLink(email)
        assert.strictEqual(refused.status, 400, email)
        assert.strictEqual(refused.body.code, "VALIDATION_FAILED")
      }
      assert.strictEqual((yield* browse("/api/app/auth/email-link", { json: { email: uniqueEmail(), extra: 1 } })).status, 400)

      const person = yield* newPerson("Origin")
      const foreign = yield* askLink(person.email, {}, { origin: "https://evil.example" })
      assert.deepStrictEqual([foreign.status, foreign.body.code], [403, "CSRF_REJECTED"])
      const own = yield* askLink(person.email, {}, { origin: PUBLIC_ORIGIN })
      assert.strictEqual(own.status, 202)
      // Only the request from Herald's own origin was mailed.
      yield* mailTo(person.email)
      assert.strictEqual(smtp.to(person.email).length, 1)
    }))

  it.effect("next: only a path on Herald's origin; anything else lands on /", () =>
    Effect.gen(function*() {
      const person = yield* newPerson("Next")
      // Refused when asked for: the link carries no next.
      assert.strictEqual((yield* askLink(person.email, { next: "//evil.example/x" })).status, 202)
      const url = LINK.exec((yield* mailTo(person.email)).text)![0]
      assert.isNull(new URL(url).searchParams.get("next"))
      // Edited into the link by hand: ignored.
      const edited = `${pathOf(url)}&next=${encodeURIComponent("https://evil.example/")}`
      const opened = yield* browse(edited)
      assert.deepStrictEqual([opened.status, opened.headers.get("location")], [302, "/"])
      assert.match(sessionOf(opened.cookies) ?? "", /^hls_/)
      for (const next of ["//evil.example", "/\\evil.example", "javascript:alert(1)", "/a b", "https://evil.example/"]) {
        assert.strictEqual((yield* browse(`/api/app/auth/link?token=&next=${encodeURIComponent(next)}`)).headers.get("location"), "/sign-in?error=link")
      }
    }))

  it.effect("a cookie-authenticated change needs X-Herald-CSRF and Herald's own Origin; a bearer one does not", () =>
    Effect.gen(function*() {
      const person = yield* newPerson("Csrf")
      yield* askLink(person.email)
      const opened = yield* browse(pathOf(LINK.exec((yield* mailTo(person.email)).text)![0]))
      const session = sessionOf(opened.cookies)!
      const create = (headers: Record<string, string>, cookie: string | null = session) =>
        browse("/api/app/tokens", { cookie: cookie ?? undefined, headers, json: { name: "from the console", scopes: ["notifications:send"] } })

      const noHeader = yield* create({})
      assert.deepStrictEqual([noHeader.status, noHeader.body.code], [403, "CSRF_REJECTED"])
      assert.include(noHeader.body.error, "X-Herald-CSRF")
      const foreign = yield* create({ "x-herald-csrf": "1", origin: "https://evil.example" })
      assert.deepStrictEqual([foreign.status, foreign.body.code], [403, "CSRF_REJECTED"])
      const blank = yield* create({ "x-herald-csrf": " " })
      assert.strictEqual(blank.status, 403)
      // A read with another page's Origin is refused too; a plain read is not.
      assert.strictEqual((yield* browse("/api/app/me", { cookie: session, headers: { origin: "https://evil.example" } })).status, 403)
      assert.strictEqual((yield* browse("/api/app/me", { cookie: session })).status, 200)

      assert.strictEqual((yield* create({ "x-herald-csrf": "1" })).status, 201)
      assert.strictEqual((yield* create({ "x-herald-csrf": "1", origin: PUBLIC_ORIGIN })).status, 201)
      // A bearer session is no cookie: no header needed, and it wins over a cookie sent beside it.
      const bearer = yield* create({ authorization: `Bearer ${session}` }, "hls_not-a-session")
      assert.strictEqual(bearer.status, 201)
      // No credential at all: 401, saying how to send one.
      const none = yield* create({}, null)
      assert.deepStrictEqual([none.status, none.body.code], [401, "UNAUTHORIZED"])
      // A cookie that is no session: 401 like a bearer one.
      const bogus = yield* browse("/api/app/me", { cookie: "hls_bogus" })
      assert.deepStrictEqual([bogus.status, bogus.body.code], [401, "UNAUTHORIZED"])
    }))
})

layer(testServerLayer({ HERALD_ADDRESS_LIMIT_SIGN_IN_PER_MINUTE: "3" }), { timeout: "60 seconds", excludeTestServices: true })(
  "sign-in per address",
  (it) => {
    it.effect("sign-in requests from one address share one budget: 429 past it, with the limit headers", () =>
      Effect.gen(function*() {
        assert.strictEqual((yield* askLink(uniqueEmail())).status, 202)
        assert.strictEqual((yield* askLink(uniqueEmail())).status, 202)
        assert.strictEqual((yield* browse("/api/app/auth/passkey/options", { method: "POST" })).status, 200)
        for (const refused of [yield* askLink(uniqueEmail()), yield* browse("/api/app/auth/passkey/options", { method: "POST" })]) {
          assert.deepStrictEqual([refused.status, refused.body.code], [429, "RATE_LIMITED"])
          assert.include(refused.body.error, "Too many sign-in requests from this address (3 a minute)")
          assert.strictEqual(refused.headers.get("ratelimit-limit"), "3")
          assert.isTrue(Number(refused.headers.get("retry-after")) >= 1)
        }
      }))
  }
)

// Every line the service logs, for the quick start without SMTP.
const lines: Array<string> = []
const CapturedLog = Logger.layer([Logger.map(Logger.formatLogFmt, (line) => void lines.push(line))])

layer(testServerLayer().pipe(Layer.provide(CapturedLog)), { timeout: "60 seconds", excludeTestServices: true })(
  "sign-in links without SMTP",
  (it) => {
    it.effect("the link is written to the log at Info, and it works; an address without an account is said so", () =>
      Effect.gen(function*() {
        const person = yield* newPerson("Quick")
        assert.strictEqual((yield* askLink(person.email)).status, 202)
        const line = yield* eventually(Effect.sync(() => lines.find((l) => l.includes(`sign-in link for ${person.email}: `))), (l) => l !== undefined)
        assert.include(line!, "level=INFO")
        const url = LINK.exec(line!)![0]
        const opened = yield* browse(pathOf(url))
        assert.deepStrictEqual([opened.status, opened.headers.get("location")], [302, "/"])
        assert.match(sessionOf(opened.cookies) ?? "", /^hls_/)

        const nobody = uniqueEmail("nobody")
        assert.strictEqual((yield* askLink(nobody)).status, 202)
        const said = yield* eventually(Effect.sync(() => lines.find((l) => l.includes(`requested for ${nobody}, which has no account`))), (l) => l !== undefined)
        assert.include(said!, "herald admin user create")
      }))
  }
)
