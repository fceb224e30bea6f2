/**
 * The authorization endpoint over HTTP as a browser meets it: an untrusted
 * client or redirect URI answers an HTML page and never redirects; every
 * other refusal (response type, PKCE, scope, resource) goes back with
 * `error`, `state` and `iss` to a client a person approved before, and is
 * the HTML page for one nobody approved (no open redirect); no session shows how to sign in;
 * the consent page (escaped, unframeable, not cached) and its form: deny,
 * no scope checked, a CSRF token of another session or request, a code
 * bound to the scopes left checked.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { agentClient, makePerson, rawFetch, TestServerLayer } from "../../../../test/support/server.ts"
import { MCP_SCOPES } from "../../src/oauth/McpScopes.ts"
import {
  approve,
  authorizePath,
  formOf,
  locationOf,
  makeClient,
  openAuthorize,
  pkce,
  postConsent,
  REDIRECT_URI,
  tokenRequest,
  urls
} from "./flow.ts"

const isHtml = (headers: Headers) => headers.get("content-type")?.startsWith("text/html") === true

layer(TestServerLayer, { timeout: 60_000 })("OAuth authorize", (it) => {
  it.effect("an unknown client or an unregistered redirect_uri answers an HTML page (400), never a redirect", () =>
    Effect.gen(function*() {
      const { session } = yield* makePerson("untrusted")
      const client = yield* makeClient()
      const { challenge } = pkce()
      const cases = [
        { client_id: "ocl_unknown", code_challenge: challenge },
        { client_id: client.client_id, code_challenge: challenge, redirect_uri: "http://127.0.0.1:33418/callback/other" },
        { client_id: client.client_id, code_challenge: challenge, redirect_uri: "http://127.0.0.1:33418/callback?x=1" },
        // Checked before anything else: even a bad response_type is not sent to an unregistered URI.
        { client_id: client.client_id, response_type: "token", redirect_uri: "https://evil.example/cb" }
      ]
      for (const params of cases) {
        for (const who of [session, undefined]) {
          const r = yield* openAuthorize(params, who)
          assert.strictEqual(r.status, 400)
          assert.isNull(r.headers.get("location"))
          assert.isTrue(isHtml(r.headers))
          assert.strictEqual(r.headers.get("cache-control"), "no-store")
        }
      }
    }))

  it.effect("other refusals for a client a person approved before redirect to it with error, error_description, state and iss", () =>
    Effect.gen(function*() {
      const { session } = yield* makePerson("refusals")
      const { issuer } = yield* urls
      const client = yield* makeClient()
      const { challenge } = pkce()
      const base = { client_id: client.client_id, code_challenge: challenge }
      // Approved once: the client is trusted with error redirects from now on (RFC 9700 §4.11.2).
      yield* approve(session, base)
      const cases: ReadonlyArray<readonly [Record<string, string | undefined>, string]> = [
        [{ response_type: "token" }, "unsupported_response_type"],
        [{ code_challenge: undefined }, "invalid_request"],
        [{ code_challenge_method: "plain", code_challenge: "a".repeat(43) }, "invalid_request"],
        [{ code_challenge_method: undefined }, "invalid_request"],
        [{ code_challenge: "too-short" }, "invalid_request"],
        [{ scope: "notifications:send admin:everything" }, "invalid_scope"],
        [{ resource: "https://elsewhere.example/api/agent/mcp" }, "invalid_target"]
      ]
      for (const [params, error] of cases) {
        const r = yield* openAuthorize({ ...base, ...params } as typeof base, session)
        assert.strictEqual(r.status, 302, JSON.stringify(params))
        const location = locationOf(r.headers)
        assert.strictEqual(`${location.origin}${location.pathname}`, REDIRECT_URI)
        assert.strictEqual(location.searchParams.get("error"), error, JSON.stringify(params))
        assert.isString(location.searchParams.get("error_description"))
        assert.strictEqual(location.searchParams.get("state"), "st-1")
        assert.strictEqual(location.searchParams.get("iss"), issuer)
        assert.isNull(location.searchParams.get("code"))
      }
    }))

  it.effect("an invalid request for a client nobody approved answers the HTML page (400), never a Location (no open redirect)", () =>
    Effect.gen(function*() {
      const { session } = yield* makePerson("open-redirect")
      // Anyone can register any https redirect URI: a 302 there would make Herald an open redirector.
      const client = yield* makeClient({ redirect_uris: ["https://evil.example/cb"] })
      const { challenge } = pkce()
      const base = { client_id: client.client_id, redirect_uri: "https://evil.example/cb", code_challenge: challenge }
      const cases: ReadonlyArray<Record<string, string | undefined>> = [
        { response_type: "x" },
        { code_challenge: undefined },
        { code_challenge_method: "plain" },
        { code_challenge: "too-short" },
        { scope: "admin:everything" },
        { resource: "https://elsewhere.example/api/agent/mcp" },
        { state: "s".repeat(2001) }
      ]
      for (const params of cases) {
        for (const who of [undefined, session]) {
          const r = yield* openAuthorize({ ...base, ...params } as typeof base, who)
          assert.strictEqual(r.status, 400, JSON.stringify(params).slice(0, 80))
          assert.isNull(r.headers.get("location"))
          assert.isTrue(isHtml(r.headers))
          assert.include(r.body as string, "not been approved here before")
        }
      }
      // The same request once a person approved the client: the error goes back to it.
      const { session: owner } = yield* makePerson("approver")
      yield* approve(owner, base)
      const after = yield* openAuthorize({ ...base, response_type: "x" })
      assert.strictEqual(after.status, 302)
      const location = locationOf(after.headers)
      assert.strictEqual(`${location.origin}${location.pathname}`, "https://evil.example/cb")
      assert.strictEqual(location.searchParams.get("error"), "unsupported_response_type")
      assert.strictEqual(location.searchParams.get("state"), "st-1")
    }))

  it.effect("the first approval is recorded on the client; a denial is not an approval", () =>
    Effect.gen(function*() {
      const { session } = yield* makePerson("approved-at")
      const client = yield* makeClient()
      const { challenge } = pkce()
      const approvedAt = Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql<{ approvedAt: string | null }>`SELECT approved_at FROM oauth_clients WHERE id = ${client.client_id}`).pipe(
          Effect.map((rows) => rows[0]!.approvedAt),
          Effect.orDie
        )
      const page = yield* openAuthorize({ client_id: client.client_id, code_challenge: challenge }, session)
      yield* postConsent(formOf(page.body as string).fields, "deny", [], session)
      assert.isNull(yield* approvedAt)
      yield* approve(session, { client_id: client.client_id, code_challenge: challenge })
      const first = yield* approvedAt
      assert.isNotNull(first)
      yield* approve(session, { client_id: client.client_id, code_challenge: challenge })
      assert.strictEqual(String(yield* approvedAt), String(first))
    }))

  it.effect("no signed-in person: a page saying how to sign in and come back to this request", () =>
    Effect.gen(function*() {
      const client = yield* makeClient()
      const { challenge } = pkce()
      const params = { client_id: client.client_id, code_challenge: challenge }
      for (const authorization of [undefined, "Bearer hls_notarealsession"]) {
        const r = yield* openAuthorize(params, authorization === undefined ? undefined : authorization.slice(7))
        assert.strictEqual(r.status, 200)
        assert.isTrue(isHtml(r.headers))
        const html = r.body as string
        // Signing in alone, in the console, and back here; or a link from the operator's shell.
        assert.include(html, `href="/sign-in?next=${encodeURIComponent(authorizePath(params))}"`)
        assert.include(html, "herald admin session link --user YOU --next")
        assert.include(html, authorizePath(params).replace(/&/g, "&amp;"))
        assert.notInclude(html, "<form")
      }
    }))

  it.effect("the consent page: client, person, one checked box per scope, escaped, unframeable, not cached", () =>
    Effect.gen(function*() {
      const { person, session } = yield* makePerson("consent")
      const client = yield* makeClient({ client_name: "<script>alert(1)</script> & \"friends\"" })
      const { challenge } = pkce()
      const r = yield* openAuthorize({ client_id: client.client_id, code_challenge: challenge }, session)
      assert.strictEqual(r.status, 200)
      assert.strictEqual(r.headers.get("cache-control"), "no-store")
      assert.strictEqual(r.headers.get("x-frame-options"), "DENY")
      assert.include(r.headers.get("content-security-policy")!, "frame-ancestors 'none'")
      const html = r.body as string
      assert.notInclude(html, "<script>")
      assert.include(html, "&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;friends&quot;")
      assert.include(html, person.email)
      assert.include(html, "127.0.0.1:33418")
      const form = formOf(html)
      assert.deepStrictEqual(form.scopes, [...MCP_SCOPES])
      assert.strictEqual(form.fields.client_id, client.client_id)
      assert.strictEqual(form.fields.code_challenge, challenge)
      assert.strictEqual(form.fields.state, "st-1")
      assert.match(form.fields.csrf_token!, /^[A-Za-z0-9_-]{43}$/)
      // Parameters Herald does not use (OIDC's prompt, a client's own) are ignored.
      const extra = yield* rawFetch(`${authorizePath({ client_id: client.client_id, code_challenge: challenge })}&prompt=consent&x-client=1`, {
        headers: { authorization: `Bearer ${session}` }
      })
      assert.strictEqual(extra.status, 200)
      assert.include(extra.body as string, "Approve")
      // The requested scopes when the client names them.
      const named = yield* openAuthorize({ client_id: client.client_id, code_challenge: challenge, scope: "inbox:read tokens:manage" }, session)
      assert.deepStrictEqual(formOf(named.body as string).scopes, ["inbox:read", "tokens:manage"])
    }))

  it.effect("approve with fewer scopes: the code carries only those, with state and iss", () =>
    Effect.gen(function*() {
      const { session } = yield* makePerson("approve")
      const { issuer } = yield* urls
      const client = yield* makeClient()
      const { challenge, verifier } = pkce()
      const { code, location } = yield* approve(session, { client_id: client.client_id, code_challenge: challenge }, ["inbox:read"])
      assert.match(code, /^hla_/)
      assert.strictEqual(location.searchParams.get("state"), "st-1")
      assert.strictEqual(location.searchParams.get("iss"), issuer)
      const tokens = yield* tokenRequest({ grant_type: "authorization_code", code, redirect_uri: REDIRECT_URI, code_verifier: verifier, client_id: client.client_id })
      assert.strictEqual((tokens.body as { scope: string }).scope, "inbox:read")
      const status = yield* (yield* agentClient((tokens.body as { access_token: string }).access_token)).auth.status()
      assert.deepStrictEqual(status.token.scopes, ["inbox:read"])
    }))

  it.effect("deny, or approve with nothing checked, is access_denied; a scope never requested is refused", () =>
    Effect.gen(function*() {
      const { session } = yield* makePerson("deny")
      const client = yield* makeClient()
      const { challenge } = pkce()
      const page = yield* openAuthorize({ client_id: client.client_id, code_challenge: challenge, scope: "inbox:read" }, session)
      const { fields } = formOf(page.body as string)
      const denied = yield* postConsent(fields, "deny", ["inbox:read"], session)
      assert.strictEqual(denied.status, 302)
      assert.strictEqual(locationOf(denied.headers).searchParams.get("error"), "access_denied")
      assert.strictEqual(locationOf(denied.headers).searchParams.get("state"), "st-1")
      const none = yield* postConsent(fields, "approve", [], session)
      assert.strictEqual(locationOf(none.headers).searchParams.get("error"), "access_denied")
      const more = yield* postConsent(fields, "approve", ["inbox:read", "tokens:manage"], session)
      assert.strictEqual(locationOf(more.headers).searchParams.get("error"), "invalid_scope")
      assert.isNull(locationOf(more.headers).searchParams.get("code"))
    }))

  it.effect("the form needs the same session and request its CSRF token was made for (403 otherwise)", () =>
    Effect.gen(function*() {
      const { session } = yield* makePerson("csrf")
      const { session: intruder } = yield* makePerson("intruder")
      const client = yield* makeClient()
      const { challenge } = pkce()
      const page = yield* openAuthorize({ client_id: client.client_id, code_challenge: challenge }, session)
      const { fields } = formOf(page.body as string)
      const forbidden = [
        yield* postConsent(fields, "approve", ["inbox:read"], intruder),
        yield* postConsent({ ...fields, csrf_token: "x".repeat(43) }, "approve", ["inbox:read"], session),
        yield* postConsent({ ...fields, state: "another" }, "approve", ["inbox:read"], session),
        yield* postConsent({ ...fields, code_challenge: pkce().challenge }, "approve", ["inbox:read"], session),
        yield* postConsent(Object.fromEntries(Object.entries(fields).filter(([k]) => k !== "csrf_token")), "approve", ["inbox:read"], session),
        yield* postConsent(fields, "approve", ["inbox:read"])
      ]
      for (const r of forbidden) {
        assert.strictEqual(r.status, 403)
        assert.isNull(r.headers.get("location"))
        assert.isTrue(isHtml(r.headers))
      }
      // The form is re-validated like the request: a redirect URI swapped in is a page, not a redirect.
      const swapped = yield* postConsent({ ...fields, redirect_uri: "https://evil.example/cb" }, "approve", ["inbox:read"], session)
      assert.strictEqual(swapped.status, 400)
      assert.isNull(swapped.headers.get("location"))
    }))
})
