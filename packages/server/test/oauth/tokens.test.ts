/**
 * The token endpoint over HTTP: the whole flow to tokens, the access token on
 * the Agent API and in `GET /tokens` as kind `oauth`, PKCE and redirect-URI
 * refusals, replayed codes and reused refresh tokens (each revoking the
 * grant), scope escalation on refresh, one grant per client and person,
 * revocation by `DELETE /tokens/{id}` and `/oauth/revoke`, and client
 * authentication for public and confidential clients.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { agentClient, makePerson, personClient, rawFetch, TestServerLayer } from "../../../../test/support/server.ts"
import { MCP_SCOPES } from "../../src/oauth/McpScopes.ts"
import {
  agentAuthStatus,
  approve,
  connect,
  makeClient,
  pkce,
  REDIRECT_URI,
  refresh,
  revokeRequest,
  tokenRequest
} from "./flow.ts"

const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString("base64")}`

layer(TestServerLayer, { timeout: 60_000 })("OAuth tokens", (it) => {
  it.effect("the full flow issues an access token that works on the Agent API and is listed as kind oauth", () =>
    Effect.gen(function*() {
      const { person, session } = yield* makePerson("flow")
      const { client, tokens } = yield* connect(session)
      assert.strictEqual(tokens.token_type, "Bearer")
      assert.strictEqual(tokens.expires_in, 3600)
      assert.match(tokens.access_token, /^hlo_/)
      assert.match(tokens.refresh_token, /^hlr_/)
      assert.deepStrictEqual(tokens.scope.split(" "), [...MCP_SCOPES])

      const agent = yield* agentClient(tokens.access_token)
      const status = yield* agent.auth.status()
      assert.strictEqual(status.userId, person.id)
      assert.deepStrictEqual(status.token.scopes, [...MCP_SCOPES])

      const app = yield* personClient(session)
      const listed = yield* app.tokens.list()
      assert.strictEqual(listed.items.length, 1)
      const grant = listed.items[0]!
      assert.strictEqual(grant.kind, "oauth")
      assert.deepStrictEqual({ ...grant.oauthClient }, { clientId: client.client_id, name: "Test client" })
      assert.strictEqual(grant.name, "Test client")
      assert.strictEqual(grant.id, status.token.id)
      assert.isNull(grant.revokedAt)
    }))

  it.effect("the token endpoint answers no-store, and errors in the OAuth shape", () =>
    Effect.gen(function*() {
      const { session } = yield* makePerson("nostore")
      const client = yield* makeClient()
      const { challenge, verifier } = pkce()
      const { code } = yield* approve(session, { client_id: client.client_id, code_challenge: challenge })
      const ok = yield* tokenRequest({ grant_type: "authorization_code", code, redirect_uri: REDIRECT_URI, code_verifier: verifier, client_id: client.client_id })
      assert.strictEqual(ok.status, 200)
      assert.strictEqual(ok.headers.get("cache-control"), "no-store")
      const bad = yield* tokenRequest({ grant_type: "password", client_id: client.client_id })
      assert.strictEqual(bad.status, 400)
      assert.strictEqual(bad.headers.get("cache-control"), "no-store")
      assert.deepStrictEqual(bad.body, { error: "unsupported_grant_type", error_description: "grant_type must be authorization_code or refresh_token" })
      const missing = yield* tokenRequest({ client_id: client.client_id })
      assert.strictEqual((missing.body as { error: string }).error, "invalid_request")
      // A form the schema cannot read (a repeated field) still answers the OAuth shape.
      const repeated = yield* rawFetch("/oauth/token", {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: `grant_type=refresh_token&grant_type=authorization_code&client_id=${client.client_id}`
      })
      assert.strictEqual(repeated.status, 400)
      assert.strictEqual((repeated.body as { error: string }).error, "invalid_request")
      assert.isUndefined((repeated.body as { code?: unknown }).code)
    }))

  it.effect("PKCE: a wrong or malformed verifier is invalid_grant", () =>
    Effect.gen(function*() {
      const { session } = yield* makePerson("pkce")
      const client = yield* makeClient()
      const { challenge } = pkce()
      const { code } = yield* approve(session, { client_id: client.client_id, code_challenge: challenge })
      for (const verifier of [pkce().verifier, "short", "x".repeat(129)]) {
        const r = yield* tokenRequest({ grant_type: "authorization_code", code, redirect_uri: REDIRECT_URI, code_verifier: verifier, client_id: client.client_id })
        assert.strictEqual(r.status, 400)
        assert.deepStrictEqual(r.body, { error: "invalid_grant", error_description: "code_verifier does not match the code_challenge." })
      }
    }))

  it.effect("a redirect_uri other than the code's is invalid_grant; another client's code too", () =>
    Effect.gen(function*() {
      const { session } = yield* makePerson("redirect")
      const client = yield* makeClient({ redirect_uris: [REDIRECT_URI, "http://localhost:9/other"] })
      const other = yield* makeClient()
      const { challenge, verifier } = pkce()
      const { code } = yield* approve(session, { client_id: client.client_id, code_challenge: challenge })
      const wrongUri = yield* tokenRequest({ grant_type: "authorization_code", code, redirect_uri: "http://localhost:9/other", code_verifier: verifier, client_id: client.client_id })
      assert.strictEqual(wrongUri.status, 400)
      assert.strictEqual((wrongUri.body as { error: string }).error, "invalid_grant")
      const wrongClient = yield* tokenRequest({ grant_type: "authorization_code", code, redirect_uri: REDIRECT_URI, code_verifier: verifier, client_id: other.client_id })
      assert.strictEqual((wrongClient.body as { error: string }).error, "invalid_grant")
      // Neither attempt used the code up.
      const ok = yield* tokenRequest({ grant_type: "authorization_code", code, redirect_uri: REDIRECT_URI, code_verifier: verifier, client_id: client.client_id })
      assert.strictEqual(ok.status, 200)
    }))

  it.effect("a replayed code is invalid_grant and revokes the grant issued from it", () =>
    Effect.gen(function*() {
      const { session } = yield* makePerson("replay")
      const { client, code, tokens, verifier } = yield* connect(session)
      assert.strictEqual(yield* agentAuthStatus(tokens.access_token), 200)
      const again = yield* tokenRequest({ grant_type: "authorization_code", code, redirect_uri: REDIRECT_URI, code_verifier: verifier, client_id: client.client_id })
      assert.strictEqual(again.status, 400)
      assert.strictEqual((again.body as { error: string }).error, "invalid_grant")
      assert.strictEqual(yield* agentAuthStatus(tokens.access_token), 401)
      const refreshed = yield* refresh(client.client_id, tokens.refresh_token)
      assert.strictEqual((refreshed.body as { error: string }).error, "invalid_grant")
      const listed = yield* (yield* personClient(session)).tokens.list()
      assert.isNotNull(listed.items[0]!.revokedAt)
    }))

  it.effect("two concurrent exchanges of one code: one wins, the other is a replay that revokes the grant", () =>
    Effect.gen(function*() {
      const { session } = yield* makePerson("race")
      const client = yield* makeClient()
      const { challenge, verifier } = pkce()
      const { code } = yield* approve(session, { client_id: client.client_id, code_challenge: challenge })
      const form = { grant_type: "authorization_code", code, redirect_uri: REDIRECT_URI, code_verifier: verifier, client_id: client.client_id }
      const answers = yield* Effect.all([tokenRequest(form), tokenRequest(form)], { concurrency: "unbounded" })
      assert.deepStrictEqual(answers.map((a) => a.status).sort(), [200, 400])
      const won = answers.find((a) => a.status === 200)!.body as { access_token: string }
      assert.strictEqual(yield* agentAuthStatus(won.access_token), 401)
    }))

  it.effect("two concurrent refreshes with one token: at most one pair issued, and the grant is revoked", () =>
    Effect.gen(function*() {
      const { session } = yield* makePerson("refreshrace")
      const { client, tokens } = yield* connect(session)
      const answers = yield* Effect.all([refresh(client.client_id, tokens.refresh_token), refresh(client.client_id, tokens.refresh_token)], {
        concurrency: "unbounded"
      })
      assert.isAtMost(answers.filter((a) => a.status === 200).length, 1)
      for (const a of answers.filter((a) => a.status === 200)) {
        assert.strictEqual(yield* agentAuthStatus((a.body as { access_token: string }).access_token), 401)
      }
      assert.strictEqual(yield* agentAuthStatus(tokens.access_token), 401)
    }))

  it.effect("refresh rotates: a new pair, the old refresh token used up; reusing it revokes the grant", () =>
    Effect.gen(function*() {
      const { session } = yield* makePerson("rotate")
      const { client, tokens } = yield* connect(session)
      const first = yield* refresh(client.client_id, tokens.refresh_token)
      assert.strictEqual(first.status, 200)
      const next = first.body as typeof tokens
      assert.notStrictEqual(next.refresh_token, tokens.refresh_token)
      assert.notStrictEqual(next.access_token, tokens.access_token)
      assert.strictEqual(yield* agentAuthStatus(next.access_token), 200)
      // The old one presented again: a stolen copy. The grant ends, the live access token with it.
      const reused = yield* refresh(client.client_id, tokens.refresh_token)
      assert.strictEqual(reused.status, 400)
      assert.strictEqual((reused.body as { error: string }).error, "invalid_grant")
      assert.strictEqual(yield* agentAuthStatus(next.access_token), 401)
      assert.strictEqual(yield* agentAuthStatus(tokens.access_token), 401)
      const latest = yield* refresh(client.client_id, next.refresh_token)
      assert.strictEqual((latest.body as { error: string }).error, "invalid_grant")
    }))

  it.effect("refresh may narrow the scope, never widen it (invalid_scope)", () =>
    Effect.gen(function*() {
      const { session } = yield* makePerson("scope")
      const { client, tokens } = yield* connect(session, { scope: "notifications:send inbox:read" })
      const wider = yield* refresh(client.client_id, tokens.refresh_token, { scope: "notifications:send tokens:manage" })
      assert.strictEqual(wider.status, 400)
      assert.strictEqual((wider.body as { error: string }).error, "invalid_scope")
      const unknown = yield* refresh(client.client_id, tokens.refresh_token, { scope: "root" })
      assert.strictEqual((unknown.body as { error: string }).error, "invalid_scope")
      const narrower = yield* refresh(client.client_id, tokens.refresh_token, { scope: "inbox:read" })
      assert.strictEqual(narrower.status, 200)
      const next = narrower.body as typeof tokens
      assert.strictEqual(next.scope, "inbox:read")
      const status = yield* (yield* agentClient(next.access_token)).auth.status()
      assert.deepStrictEqual(status.token.scopes, ["inbox:read"])
      // The grant keeps its scopes: the next refresh may ask for both again.
      const again = yield* refresh(client.client_id, next.refresh_token)
      assert.strictEqual((again.body as typeof tokens).scope, "notifications:send inbox:read")
    }))

  it.effect("approving the same client again replaces the person's earlier grant", () =>
    Effect.gen(function*() {
      const { session } = yield* makePerson("again")
      const first = yield* connect(session)
      const { challenge, verifier } = pkce()
      const { code } = yield* approve(session, { client_id: first.client.client_id, code_challenge: challenge })
      const second = yield* tokenRequest({ grant_type: "authorization_code", code, redirect_uri: REDIRECT_URI, code_verifier: verifier, client_id: first.client.client_id })
      assert.strictEqual(second.status, 200)
      assert.strictEqual(yield* agentAuthStatus(first.tokens.access_token), 401)
      assert.strictEqual(yield* agentAuthStatus((second.body as { access_token: string }).access_token), 200)
      const listed = yield* (yield* personClient(session)).tokens.list()
      assert.deepStrictEqual(listed.items.map((t) => t.revokedAt === null), [true, false])
    }))

  it.effect("DELETE /tokens/{id} signs the client out at once: access 401, refresh invalid_grant", () =>
    Effect.gen(function*() {
      const { session } = yield* makePerson("revoke")
      const { client, tokens } = yield* connect(session)
      const app = yield* personClient(session)
      const grant = (yield* app.tokens.list()).items[0]!
      yield* app.tokens.revoke({ params: { id: grant.id } })
      assert.strictEqual(yield* agentAuthStatus(tokens.access_token), 401)
      const refreshed = yield* refresh(client.client_id, tokens.refresh_token)
      assert.strictEqual(refreshed.status, 400)
      assert.strictEqual((refreshed.body as { error: string }).error, "invalid_grant")
    }))

  it.effect("DELETE /api/agent/tokens/{id} revokes an oauth grant the same way", () =>
    Effect.gen(function*() {
      const { session } = yield* makePerson("agentrevoke")
      const manager = yield* connect(session, { scope: "tokens:manage" })
      const other = yield* connect(session)
      const agent = yield* agentClient(manager.tokens.access_token)
      const listed = yield* agent.tokens.list()
      const target = listed.items.find((t) => t.oauthClient?.clientId === other.client.client_id)!
      assert.strictEqual(target.kind, "oauth")
      yield* agent.tokens.revoke({ params: { id: target.id } })
      assert.strictEqual(yield* agentAuthStatus(other.tokens.access_token), 401)
      assert.strictEqual((yield* refresh(other.client.client_id, other.tokens.refresh_token)).status, 400)
    }))

  it.effect("/oauth/revoke revokes the client's grant by access or refresh token; unknown tokens answer 200", () =>
    Effect.gen(function*() {
      const { session } = yield* makePerson("rfc7009")
      const byAccess = yield* connect(session)
      const post = revokeRequest
      const unknown = yield* post({ token: "hlo_nothing", client_id: byAccess.client.client_id })
      assert.strictEqual(unknown.status, 200)
      // Another client's token: answered 200, revokes nothing.
      const other = yield* makeClient()
      assert.strictEqual((yield* post({ token: byAccess.tokens.access_token, client_id: other.client_id })).status, 200)
      assert.strictEqual(yield* agentAuthStatus(byAccess.tokens.access_token), 200)
      assert.strictEqual((yield* post({ token: byAccess.tokens.access_token, client_id: byAccess.client.client_id })).status, 200)
      assert.strictEqual(yield* agentAuthStatus(byAccess.tokens.access_token), 401)
      const byRefresh = yield* connect(session)
      assert.strictEqual((yield* post({ token: byRefresh.tokens.refresh_token, client_id: byRefresh.client.client_id })).status, 200)
      assert.strictEqual(yield* agentAuthStatus(byRefresh.tokens.access_token), 401)
      assert.strictEqual((yield* refresh(byRefresh.client.client_id, byRefresh.tokens.refresh_token)).status, 400)
      // Client authentication still applies.
      const unauthenticated = yield* post({ token: byRefresh.tokens.refresh_token, client_id: "ocl_nope" })
      assert.strictEqual(unauthenticated.status, 401)
    }))

  it.effect("client_secret_post and client_secret_basic clients authenticate by their method only", () =>
    Effect.gen(function*() {
      const { session } = yield* makePerson("confidential")
      for (const method of ["client_secret_post", "client_secret_basic"] as const) {
        const client = yield* makeClient({ token_endpoint_auth_method: method })
        assert.match(client.client_secret!, /^hlc_/)
        const { challenge, verifier } = pkce()
        const { code } = yield* approve(session, { client_id: client.client_id, code_challenge: challenge })
        const form = { grant_type: "authorization_code", code, redirect_uri: REDIRECT_URI, code_verifier: verifier }
        const refusals = [
          yield* tokenRequest({ ...form, client_id: client.client_id }),
          yield* tokenRequest({ ...form, client_id: client.client_id, client_secret: "hlc_wrong" }),
          yield* tokenRequest(form, { authorization: basic(client.client_id, "hlc_wrong") }),
          method === "client_secret_post"
            ? yield* tokenRequest(form, { authorization: basic(client.client_id, client.client_secret!) })
            : yield* tokenRequest({ ...form, client_id: client.client_id, client_secret: client.client_secret! }),
          yield* tokenRequest({ ...form, client_id: "ocl_unknown" })
        ]
        for (const r of refusals) {
          assert.strictEqual(r.status, 401)
          assert.strictEqual((r.body as { error: string }).error, "invalid_client")
        }
        // RFC 6749 §5.2: a failed Basic attempt is challenged for Basic.
        assert.strictEqual(refusals[2]!.headers.get("www-authenticate"), "Basic realm=\"herald\"")
        assert.isNull(refusals[1]!.headers.get("www-authenticate"))
        const ok = method === "client_secret_post"
          ? yield* tokenRequest({ ...form, client_id: client.client_id, client_secret: client.client_secret! })
          : yield* tokenRequest(form, { authorization: basic(client.client_id, client.client_secret!) })
        assert.strictEqual(ok.status, 200)
      }
      // A public client sending a secret is refused too.
      const pub = yield* makeClient()
      const sent = yield* tokenRequest({ grant_type: "refresh_token", refresh_token: "x", client_id: pub.client_id, client_secret: "hlc_x" })
      assert.strictEqual(sent.status, 401)
    }))
})

