/**
 * Bounded client registration (issue 30): the global registration rate and
 * the cap on clients waiting for a first approval (429
 * `temporarily_unavailable` with `Retry-After`), the total size of
 * `redirect_uris`, RFC 8252 §7.1 private-use schemes and refused OS-handler
 * schemes, the sweep that clears a backlog larger than one batch and deletes
 * never-approved clients after the short TTL, and the operator's switch:
 * `token` (an initial access token, RFC 7591 §3) and `closed` (403, not
 * advertised; the operator registers clients, which are trusted).
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { makePerson, rawFetch, testServerLayer, TestServerLayer } from "../../../../test/support/server.ts"
import { OAuthClients } from "../../src/oauth/OAuthClients.ts"
import { OAuthSweep } from "../../src/oauth/Sweep.ts"
import { approve, locationOf, makeClient, openAuthorize, pkce, REDIRECT_URI, registerClient, tokenRequest } from "./flow.ts"

const errorOf = (r: { body: unknown }) => (r.body as { error?: string }).error

const clientExists = (id: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ id: string }>`SELECT id FROM oauth_clients WHERE id = ${id}`).pipe(
    Effect.map((rows) => rows.length === 1),
    Effect.orDie
  )

const ageMinutes = (id: string, minutes: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE oauth_clients SET created_at = now() - make_interval(mins => ${minutes}) WHERE id = ${id}`).pipe(Effect.orDie)

// The per-address limit (another setting) is off here, so only the global bound answers.
layer(testServerLayer({ HERALD_OAUTH_REGISTRATIONS_PER_MINUTE: "20", HERALD_ADDRESS_LIMIT_REGISTER_PER_MINUTE: "0" }), { timeout: 60_000 })(
  "OAuth registration: the global rate",
  (it) => {
    it.effect("150 registrations in a burst: the minute's budget is registered, the rest answer 429 temporarily_unavailable with Retry-After", () =>
      Effect.gen(function*() {
        const answers = yield* Effect.forEach(
          Array.from({ length: 150 }, (_, i) => i),
          (i) => registerClient({ client_name: `flood ${i}`, redirect_uris: [`https://flood.example/${i}`], token_endpoint_auth_method: "none" }),
          { concurrency: 10 }
        )
        const created = answers.filter((r) => r.status === 201)
        const refused = answers.filter((r) => r.status === 429)
        assert.strictEqual(created.length, 20)
        assert.strictEqual(refused.length, 130)
        for (const r of refused) {
          assert.strictEqual(errorOf(r), "temporarily_unavailable")
          assert.isString((r.body as { error_description?: string }).error_description)
          const retryAfter = Number(r.headers.get("retry-after"))
          assert.isTrue(Number.isInteger(retryAfter) && retryAfter >= 1 && retryAfter <= 60, String(r.headers.get("retry-after")))
        }
        const sql = yield* SqlClient.SqlClient
        const stored = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM oauth_clients WHERE name LIKE 'flood %'`
        assert.strictEqual(stored[0]!.n, 20)
      }).pipe(Effect.orDie))

    it.effect("a refused request (bad metadata) does not spend the budget; the OpenAPI lists every answer", () =>
      Effect.gen(function*() {
        const bad = yield* registerClient({ redirect_uris: ["foo:/cb"] })
        assert.strictEqual(bad.status, 400)
        assert.strictEqual(errorOf(bad), "invalid_redirect_uri")
        const doc = yield* rawFetch("/oauth/openapi.json")
        const responses = (doc.body as { paths: Record<string, { post: { responses: Record<string, unknown> } }> }).paths["/oauth/register"]!.post.responses
        for (const status of ["201", "400", "401", "403", "429"]) assert.property(responses, status)
      }))
  }
)

layer(testServerLayer({ HERALD_OAUTH_MAX_UNAPPROVED_CLIENTS: "3" }), { timeout: 60_000 })("OAuth registration: the cap on unapproved clients", (it) => {
  it.effect("past the cap registration answers 429 temporarily_unavailable; an approval frees a place; operator clients do not count", () =>
    Effect.gen(function*() {
      const operator = yield* Effect.flatMap(OAuthClients, (c) => c.registerAsOperator({ client_name: "Ops", redirect_uris: [REDIRECT_URI] }))
      const first = yield* makeClient()
      yield* makeClient()
      yield* makeClient()
      const over = yield* registerClient({ redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: "none" })
      assert.strictEqual(over.status, 429)
      assert.strictEqual(errorOf(over), "temporarily_unavailable")
      assert.isAtLeast(Number(over.headers.get("retry-after")), 1)
      assert.isTrue(yield* clientExists(operator.client_id))

      const { session } = yield* makePerson("cap")
      yield* approve(session, { client_id: first.client_id, code_challenge: pkce().challenge })
      const room = yield* registerClient({ redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: "none" })
      assert.strictEqual(room.status, 201)
    }))
})

// Only the cap answers here: the rates are off.
layer(
  testServerLayer({
    HERALD_OAUTH_MAX_UNAPPROVED_CLIENTS: "4",
    HERALD_OAUTH_REGISTRATIONS_PER_MINUTE: "0",
    HERALD_ADDRESS_LIMIT_REGISTER_PER_MINUTE: "0"
  }),
  { timeout: 60_000 }
)("OAuth registration: the cap under concurrent registrations", (it) => {
  it.effect("24 registrations at once: the count is taken under a lock, so exactly the cap is stored and the rest answer 429", () =>
    Effect.gen(function*() {
      const answers = yield* Effect.forEach(
        Array.from({ length: 24 }, (_, i) => i),
        (i) => registerClient({ client_name: `race ${i}`, redirect_uris: [`https://race.example/${i}`], token_endpoint_auth_method: "none" }),
        { concurrency: "unbounded" }
      )
      assert.deepStrictEqual(answers.map((r) => r.status).filter((s) => s !== 201 && s !== 429), [])
      assert.strictEqual(answers.filter((r) => r.status === 201).length, 4)
      const sql = yield* SqlClient.SqlClient
      const stored = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM oauth_clients WHERE name LIKE 'race %'`
      assert.strictEqual(stored[0]!.n, 4)
    }).pipe(Effect.orDie))
})

layer(TestServerLayer, { timeout: 120_000 })("OAuth registration: redirect URIs and the sweep", (it) => {
  it.effect("redirect_uris are bounded in total size (invalid_redirect_uri), each URI and the count as before", () =>
    Effect.gen(function*() {
      const uri = (i: number) => `https://a.example/${i}/${"x".repeat(1480)}`
      const tooMuch = yield* registerClient({ redirect_uris: [uri(1), uri(2), uri(3)] })
      assert.strictEqual(tooMuch.status, 400)
      assert.strictEqual(errorOf(tooMuch), "invalid_redirect_uri")
      assert.include((tooMuch.body as { error_description: string }).error_description, "4096")
      const fits = yield* registerClient({ redirect_uris: [uri(1), uri(2)], token_endpoint_auth_method: "none" })
      assert.strictEqual(fits.status, 201)
    }))

  it.effect("private-use schemes in reverse-domain form only (RFC 8252 §7.1); OS-handler schemes refused", () =>
    Effect.gen(function*() {
      for (
        const refused of [
          "search-ms:query=x&crumb=location:\\\\evil.example\\share",
          "search:query=x",
          "foo:/cb",
          "myapp://callback",
          "ms-settings:privacy",
          "ms-msdt:/id",
          "shell:startup",
          "x-apple.systempreferences:com.apple.preference",
          "itms-services://?action=download-manifest",
          "vnd.ms-excel.app:/cb"
        ]
      ) {
        const r = yield* registerClient({ redirect_uris: [refused] })
        assert.strictEqual(r.status, 400, refused)
        assert.strictEqual(errorOf(r), "invalid_redirect_uri", refused)
      }
      for (const accepted of ["com.example.app:/cb", "com.example.app://oauth/callback", "cursor://anysphere.cursor-retrieval/oauth/callback"]) {
        const r = yield* registerClient({ redirect_uris: [accepted], token_endpoint_auth_method: "none" })
        assert.strictEqual(r.status, 201, accepted)
      }
    }))

  it.effect("the sweep deletes a backlog of more than one batch in one pass, and never-approved clients after the short TTL", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      // 2,500 never-approved clients two hours old: more than two batches of 1,000.
      yield* sql`INSERT INTO oauth_clients (id, name, created_at)
                 SELECT 'ocl_backlog_' || i, 'backlog', now() - interval '2 hours' FROM generate_series(1, 2500) i`
      const neverApproved = yield* makeClient()
      const fresh = yield* makeClient()
      const { session } = yield* makePerson("sweep-ttl")
      // Approved once (a code was issued) but no grant yet: kept for the day approved clients get.
      const approvedOnce = yield* makeClient()
      yield* approve(session, { client_id: approvedOnce.client_id, code_challenge: pkce().challenge })
      const operator = yield* Effect.flatMap(OAuthClients, (c) => c.registerAsOperator({ client_name: "Ops", redirect_uris: [REDIRECT_URI] }))
      yield* ageMinutes(neverApproved.client_id, 61)
      yield* ageMinutes(approvedOnce.client_id, 61)
      yield* ageMinutes(operator.client_id, 48 * 60)

      const result = yield* (yield* OAuthSweep).sweep
      assert.isAtLeast(result.clients, 2501)
      const left = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM oauth_clients WHERE name = 'backlog'`
      assert.strictEqual(left[0]!.n, 0)
      assert.isFalse(yield* clientExists(neverApproved.client_id))
      assert.isTrue(yield* clientExists(fresh.client_id))
      assert.isTrue(yield* clientExists(approvedOnce.client_id))
      assert.isTrue(yield* clientExists(operator.client_id))

      // A day without a grant: the approved one goes too; the operator's stays until the operator deletes it.
      yield* ageMinutes(approvedOnce.client_id, 25 * 60)
      yield* (yield* OAuthSweep).sweep
      assert.isFalse(yield* clientExists(approvedOnce.client_id))
      assert.isTrue(yield* clientExists(operator.client_id))
    }).pipe(Effect.orDie))
})

const TOKEN = "iat-0123456789abcdef0123456789abcdef"

layer(testServerLayer({ HERALD_OAUTH_REGISTRATION: "token", HERALD_OAUTH_REGISTRATION_TOKEN: TOKEN }), { timeout: 60_000 })(
  "OAuth registration: an initial access token (RFC 7591 §3)",
  (it) => {
    it.effect("no token or a wrong one: 401 invalid_token with a Bearer challenge; the right one: 201", () =>
      Effect.gen(function*() {
        const body = JSON.stringify({ redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: "none" })
        const register = (authorization?: string) =>
          rawFetch("/oauth/register", {
            method: "POST",
            headers: { "content-type": "application/json", ...(authorization === undefined ? {} : { authorization }) },
            body
          })
        const missing = yield* register()
        assert.strictEqual(missing.status, 401)
        assert.strictEqual(errorOf(missing), "invalid_token")
        assert.match(missing.headers.get("www-authenticate") ?? "", /^Bearer /)
        for (const wrong of [`Bearer ${TOKEN}x`, "Bearer nope", `Basic ${TOKEN}`, TOKEN]) {
          const r = yield* register(wrong)
          assert.strictEqual(r.status, 401, wrong)
          assert.strictEqual(errorOf(r), "invalid_token")
          assert.include(r.headers.get("www-authenticate") ?? "", "error=\"invalid_token\"")
        }
        const right = yield* register(`Bearer ${TOKEN}`)
        assert.strictEqual(right.status, 201)
        const metadata = yield* rawFetch("/.well-known/oauth-authorization-server")
        assert.isString((metadata.body as { registration_endpoint?: string }).registration_endpoint)
      }))
  }
)

layer(testServerLayer({ HERALD_OAUTH_REGISTRATION: "closed" }), { timeout: 60_000 })("OAuth registration: closed", (it) => {
  it.effect("registration answers 403 saying how the operator registers; the metadata does not advertise it", () =>
    Effect.gen(function*() {
      const r = yield* registerClient({ redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: "none" })
      assert.strictEqual(r.status, 403)
      assert.strictEqual(errorOf(r), "access_denied")
      assert.include((r.body as { error_description: string }).error_description, "herald admin oauth-client create")
      const metadata = yield* rawFetch("/.well-known/oauth-authorization-server")
      assert.strictEqual(metadata.status, 200)
      assert.notProperty(metadata.body as object, "registration_endpoint")
      assert.isString((metadata.body as { token_endpoint: string }).token_endpoint)
    }))

  it.effect("an operator-registered client connects, and is trusted with error redirects", () =>
    Effect.gen(function*() {
      const client = yield* Effect.flatMap(OAuthClients, (c) =>
        c.registerAsOperator({ client_name: "Ops tool", redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: "none" }))
      const { session } = yield* makePerson("operator-client")
      const { challenge, verifier } = pkce()
      const { code } = yield* approve(session, { client_id: client.client_id, code_challenge: challenge })
      const tokens = yield* tokenRequest({ grant_type: "authorization_code", code, redirect_uri: REDIRECT_URI, code_verifier: verifier, client_id: client.client_id })
      assert.strictEqual(tokens.status, 200)

      const other = yield* Effect.flatMap(OAuthClients, (c) => c.registerAsOperator({ client_name: "Fresh ops tool", redirect_uris: [REDIRECT_URI] }))
      const invalid = yield* openAuthorize({ client_id: other.client_id, code_challenge: challenge, response_type: "x" })
      assert.strictEqual(invalid.status, 302)
      assert.strictEqual(locationOf(invalid.headers).searchParams.get("error"), "unsupported_response_type")
    }))
})
