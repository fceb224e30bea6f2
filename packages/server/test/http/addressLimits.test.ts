/**
 * Per-address limits over HTTP (http/AddressThrottle.ts): invite-code
 * guessing stopped by the default budget, registration, the OAuth routes, the
 * Person API and failed authentications each refused with 429 and the
 * `RateLimit` headers, the client named by a trusted proxy's
 * `X-Forwarded-For` only, and every class off with `0`. Each test speaks for
 * its own client address (through the trusted proxy, 127.0.0.1) so budgets
 * never mix.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { makeAgent, makePerson, rawFetch, testServerLayer } from "../../../../test/support/server.ts"

const client = { client_name: "Throttle test", redirect_uris: ["http://127.0.0.1:33418/callback"], token_endpoint_auth_method: "none" }

const register = (from?: string, body: string = JSON.stringify(client)) =>
  rawFetch("/oauth/register", {
    method: "POST",
    headers: { "content-type": "application/json", ...(from === undefined ? {} : { "x-forwarded-for": from }) },
    body
  })

const acceptInvite = (session: string, code: string, from?: string) =>
  rawFetch("/api/app/invites/accept", {
    method: "POST",
    headers: { authorization: `Bearer ${session}`, "content-type": "application/json", ...(from === undefined ? {} : { "x-forwarded-for": from }) },
    body: JSON.stringify({ code })
  })

const limitHeaders = (response: { readonly headers: Headers }) =>
  ["ratelimit-limit", "ratelimit-remaining", "ratelimit-reset", "retry-after"].map((name) => response.headers.get(name))

layer(testServerLayer(), { excludeTestServices: true, timeout: "120 seconds" })("per-address limits: defaults", (it) => {
  it.effect("1,000 invite-code guesses from one address: 429 RATE_LIMITED after the 60th, with RateLimit headers and Retry-After", () =>
    Effect.gen(function*() {
      const guesser = yield* makePerson("guesser")
      let refusedAt: number | undefined
      let refused: Effect.Success<ReturnType<typeof acceptInvite>> | undefined
      // The budget refills one guess a second of real time: on a busy machine the loop may earn a few back.
      const started = Date.now()
      const earned = () => Math.floor((Date.now() - started) / 1000) + 1
      for (let i = 0; i < 1000 && refusedAt === undefined; i++) {
        const answer = yield* acceptInvite(guesser.session, `guess-${i}-${Math.random().toString(36).slice(2)}`)
        if (answer.status === 429) {
          refusedAt = i
          refused = answer
        } else {
          assert.strictEqual(answer.status, 404)
          assert.strictEqual(answer.headers.get("ratelimit-limit"), "60")
          const remaining = Number(answer.headers.get("ratelimit-remaining"))
          assert.isAtLeast(remaining, 59 - i)
          assert.isAtMost(remaining, 59 - i + earned())
        }
      }
      assert.isAtLeast(refusedAt!, 60)
      assert.isAtMost(refusedAt!, 60 + earned())
      assert.strictEqual((refused!.body as { code: string }).code, "RATE_LIMITED")
      assert.match((refused!.body as { error: string }).error, /code or link/)
      assert.deepStrictEqual(limitHeaders(refused!), ["60", "0", "60", "1"])
      assert.isNotNull(refused!.headers.get("x-request-id"))
      // A real code is refused as well while the budget refills: the guess is never looked up.
      assert.strictEqual((yield* acceptInvite(guesser.session, "another-guess")).status, 429)
    }))
})

layer(
  testServerLayer({
    HERALD_TRUSTED_PROXIES: "127.0.0.1, 10.0.0.0/8",
    HERALD_ADDRESS_LIMIT_REGISTER_PER_MINUTE: "3",
    HERALD_ADDRESS_LIMIT_OAUTH_PER_MINUTE: "3",
    HERALD_ADDRESS_LIMIT_PERSON_API_PER_MINUTE: "3",
    HERALD_ADDRESS_LIMIT_CODES_PER_MINUTE: "2",
    HERALD_ADDRESS_LIMIT_AUTH_FAILURES_PER_MINUTE: "3"
  }),
  { excludeTestServices: true, timeout: "60 seconds" }
)("per-address limits: small budgets behind a trusted proxy", (it) => {
  it.effect("registration past its limit: 429 temporarily_unavailable before the body is read; another address still registers", () =>
    Effect.gen(function*() {
      for (let i = 0; i < 3; i++) {
        const ok = yield* register("203.0.113.1")
        assert.strictEqual(ok.status, 201)
        assert.deepStrictEqual(limitHeaders(ok).slice(0, 2), ["3", String(2 - i)])
      }
      // Not JSON at all: refused by the limit, not by the body's decoder.
      const refused = yield* register("203.0.113.1", "{not json")
      assert.strictEqual(refused.status, 429)
      const body = refused.body as { error: string; error_description: string }
      assert.strictEqual(body.error, "temporarily_unavailable")
      assert.match(body.error_description, /client registrations/)
      assert.deepStrictEqual(limitHeaders(refused), ["3", "0", "60", "20"])
      assert.strictEqual(refused.headers.get("cache-control"), "no-store")
      assert.strictEqual((yield* register("203.0.113.2")).status, 201)
    }))

  it.effect("the trusted proxy's right-most X-Forwarded-For entry is the client: what the client wrote left of it buys no budget", () =>
    Effect.gen(function*() {
      for (let i = 0; i < 3; i++) assert.strictEqual((yield* register(`198.51.100.${i}, 203.0.113.3`)).status, 201)
      assert.strictEqual((yield* register("198.51.100.99, 203.0.113.3")).status, 429)
      // A hop through a second trusted proxy (10.0.0.0/8) is skipped; the client before it is counted.
      assert.strictEqual((yield* register("203.0.113.3, 10.1.2.3")).status, 429)
      // One IPv6 /64 is one client.
      for (let i = 0; i < 3; i++) assert.strictEqual((yield* register(`2001:db8:5:6::${i + 1}`)).status, 201)
      assert.strictEqual((yield* register("2001:db8:5:6:ffff::1")).status, 429)
      assert.strictEqual((yield* register("2001:db8:5:7::1")).status, 201)
    }))

  it.effect("the OAuth routes share one budget: JSON endpoints answer temporarily_unavailable, browser pages a 429 page", () =>
    Effect.gen(function*() {
      const from = { "x-forwarded-for": "203.0.113.4" }
      const token = () =>
        rawFetch("/oauth/token", {
          method: "POST",
          headers: { ...from, "content-type": "application/x-www-form-urlencoded" },
          body: "grant_type=authorization_code&code=nope&client_id=nope"
        })
      for (let i = 0; i < 3; i++) assert.notStrictEqual((yield* token()).status, 429)
      const json = yield* token()
      assert.strictEqual(json.status, 429)
      assert.strictEqual((json.body as { error: string }).error, "temporarily_unavailable")
      const page = yield* rawFetch("/oauth/authorize?response_type=code&client_id=nope", { headers: from, redirect: "manual" })
      assert.strictEqual(page.status, 429)
      assert.match(page.headers.get("content-type") ?? "", /^text\/html/)
      assert.match(String(page.body), /Too many requests/)
      assert.strictEqual(page.headers.get("x-frame-options"), "DENY")
      assert.deepStrictEqual(limitHeaders(page).slice(0, 2), ["3", "0"])
      assert.isNotNull(page.headers.get("retry-after"))
    }))

  it.effect("sign-in links and invite codes: the code budget counts every attempt, failed ones included", () =>
    Effect.gen(function*() {
      const from = { "x-forwarded-for": "203.0.113.5" }
      const signIn = () => rawFetch(`/oauth/sign-in?token=hll_${"a".repeat(49)}`, { headers: from, redirect: "manual" })
      for (let i = 0; i < 2; i++) assert.strictEqual((yield* signIn()).status, 400)
      const refused = yield* signIn()
      assert.strictEqual(refused.status, 429)
      assert.match(refused.headers.get("content-type") ?? "", /^text\/html/)
      const person = yield* makePerson("coder")
      for (let i = 0; i < 2; i++) assert.strictEqual((yield* acceptInvite(person.session, `guess-${i}`, "203.0.113.6")).status, 404)
      const invite = yield* acceptInvite(person.session, "guess-2", "203.0.113.6")
      assert.strictEqual(invite.status, 429)
      assert.strictEqual((invite.body as { code: string }).code, "RATE_LIMITED")
    }))

  it.effect("the Person API past its limit: 429 RATE_LIMITED with the headers; every answer reports the budget", () =>
    Effect.gen(function*() {
      const person = yield* makePerson("busy")
      const me = () => rawFetch("/api/app/me", { headers: { authorization: `Bearer ${person.session}`, "x-forwarded-for": "203.0.113.7" } })
      for (let i = 0; i < 3; i++) {
        const ok = yield* me()
        assert.strictEqual(ok.status, 200)
        assert.deepStrictEqual(limitHeaders(ok), ["3", String(2 - i), String(20 * (i + 1)), null])
      }
      const refused = yield* me()
      assert.strictEqual(refused.status, 429)
      assert.strictEqual((refused.body as { code: string }).code, "RATE_LIMITED")
      assert.match((refused.body as { error: string }).error, /Too many requests from this address \(3 a minute\)/)
      assert.deepStrictEqual(limitHeaders(refused), ["3", "0", "60", "20"])
    }))

  it.effect("failed bearer authentications: after 3 from one address, its Agent API requests answer 429; other addresses are not affected", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([])
      const status = (secret: string, from: string) =>
        rawFetch("/api/agent/auth/status", { headers: { authorization: `Bearer ${secret}`, "x-forwarded-for": from } })
      const guess = `hld_${"x".repeat(40)}`
      for (let i = 0; i < 3; i++) assert.strictEqual((yield* status(guess, "203.0.113.8")).status, 401)
      const refused = yield* status(guess, "203.0.113.8")
      assert.strictEqual(refused.status, 429)
      assert.strictEqual((refused.body as { code: string }).code, "RATE_LIMITED")
      assert.match((refused.body as { error: string }).error, /failed authentications/)
      assert.isNotNull(refused.headers.get("retry-after"))
      assert.strictEqual((yield* status(agent.secret, "203.0.113.9")).status, 200)
    }))
})

layer(
  testServerLayer({ HERALD_TRUSTED_PROXIES: "10.0.0.0/8", HERALD_ADDRESS_LIMIT_REGISTER_PER_MINUTE: "2" }),
  { excludeTestServices: true, timeout: "60 seconds" }
)("per-address limits: an untrusted sender", (it) => {
  it.effect("an X-Forwarded-For from a sender that is not a trusted proxy is ignored: the socket's address is counted", () =>
    Effect.gen(function*() {
      assert.strictEqual((yield* register("203.0.113.10")).status, 201)
      assert.strictEqual((yield* register("203.0.113.11")).status, 201)
      assert.strictEqual((yield* register("203.0.113.12")).status, 429)
      assert.strictEqual((yield* register()).status, 429)
    }))
})

layer(
  testServerLayer({
    HERALD_ADDRESS_LIMIT_REGISTER_PER_MINUTE: "0",
    HERALD_ADDRESS_LIMIT_OAUTH_PER_MINUTE: "0",
    HERALD_ADDRESS_LIMIT_PERSON_API_PER_MINUTE: "0",
    HERALD_ADDRESS_LIMIT_CODES_PER_MINUTE: "0",
    HERALD_ADDRESS_LIMIT_AUTH_FAILURES_PER_MINUTE: "0"
  }),
  { excludeTestServices: true, timeout: "60 seconds" }
)("per-address limits: off", (it) => {
  it.effect("with every class at 0 nothing is refused and no answer carries RateLimit headers", () =>
    Effect.gen(function*() {
      for (let i = 0; i < 61; i++) assert.strictEqual((yield* register()).status, 201)
      const person = yield* makePerson("unlimited")
      for (let i = 0; i < 70; i++) {
        const answer = yield* acceptInvite(person.session, `guess-${i}`)
        assert.strictEqual(answer.status, 404)
        assert.isNull(answer.headers.get("ratelimit-limit"))
      }
      for (let i = 0; i < 70; i++) {
        assert.strictEqual((yield* rawFetch("/api/agent/auth/status", { headers: { authorization: "Bearer hld_nope" } })).status, 401)
      }
    }))
})
