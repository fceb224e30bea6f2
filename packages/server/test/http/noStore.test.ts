/**
 * Answers that carry a secret shown once leave with `Cache-Control: no-store`
 * and `Pragma: no-cache`, errors included (the endpoint's `OneTimeSecret`,
 * read by the edge): API tokens, inbound webhook URLs and their rotation,
 * reply-webhook signing secrets and their rotation, invite codes, connector
 * callback secrets and their rotation, gateway passes and the sessions they
 * open, OAuth client secrets and tokens, sign-in links. Each route is called
 * for real; a route that hands out nothing stays cacheable as before.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { makePerson, rawFetch, TestServerLayer } from "../../../../test/support/server.ts"
import { seedTeam } from "../../../../test/support/teams.ts"
import { approve, pkce, REDIRECT_URI, revokeRequest, tokenRequest } from "../oauth/flow.ts"

interface Answer {
  readonly status: number
  readonly headers: Headers
  readonly body: unknown
}

const call = (bearer: string | undefined, method: string, path: string, body?: unknown) =>
  rawFetch(path, {
    method,
    headers: {
      ...(bearer === undefined ? {} : { authorization: `Bearer ${bearer}` }),
      ...(body === undefined ? {} : { "content-type": "application/json" })
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })

/** The answer is `status` and is kept out of every cache. */
const assertNoStore = (answer: Answer, status: number, what: string) => {
  assert.strictEqual(answer.status, status, `${what}: ${JSON.stringify(answer.body).slice(0, 300)}`)
  assert.strictEqual(answer.headers.get("cache-control"), "no-store", what)
  assert.strictEqual(answer.headers.get("pragma"), "no-cache", what)
}

const field = (answer: Answer, ...path: Array<string>): string =>
  path.reduce<unknown>((value, key) => (value as Record<string, unknown>)[key], answer.body) as string

const scopes = ["services:read", "services:write", "teams:read", "teams:write", "connectors:read", "connectors:write"]

layer(TestServerLayer, { timeout: "60 seconds", excludeTestServices: true })("one-time secrets are never cached", (it) => {
  it.effect("every route that hands out a secret answers no-store", () =>
    Effect.gen(function*() {
      const owner = yield* makePerson("nostore")

      const token = yield* call(owner.session, "POST", "/api/app/tokens", { name: "agent", scopes })
      assertNoStore(token, 201, "POST /api/app/tokens")
      const secret = field(token, "secret")
      assert.match(secret, /^hld_/)

      const service = yield* call(secret, "POST", "/api/agent/services", { title: "CI" })
      assertNoStore(service, 201, "POST /api/agent/services")
      assert.include(field(service, "webhookUrl"), "/hooks/hlw_")
      const rotated = yield* call(secret, "POST", `/api/agent/services/${field(service, "service", "id")}/rotate`)
      assertNoStore(rotated, 200, "POST /api/agent/services/{id}/rotate")

      const webhook = yield* call(secret, "POST", "/api/agent/webhooks", { name: "bot", url: "https://example.com/hook" })
      assertNoStore(webhook, 201, "POST /api/agent/webhooks")
      assert.match(field(webhook, "signingSecret"), /^whsec_/)
      const resigned = yield* call(secret, "POST", `/api/agent/webhooks/${field(webhook, "webhook", "id")}/rotate-secret`)
      assertNoStore(resigned, 200, "POST /api/agent/webhooks/{id}/rotate-secret")

      const { teamId } = yield* seedTeam({ owner })
      const invite = yield* call(secret, "POST", `/api/agent/teams/${teamId}/invites`, { email: "guest@example.test" })
      assertNoStore(invite, 201, "POST /api/agent/teams/{id}/invites")
      assert.isString(field(invite, "code"))

      const connector = yield* call(secret, "POST", "/api/agent/connectors", {
        name: "Home lab",
        routes: [{ pathPrefix: "/grafana", upstream: "http://127.0.0.1:3000" }]
      })
      assertNoStore(connector, 201, "POST /api/agent/connectors")
      const connectorId = field(connector, "connector", "id")
      assert.match(field(connector, "callbackSecret"), /^hcb_/)
      assertNoStore(yield* call(secret, "POST", `/api/agent/connectors/${connectorId}/rotate-secret`), 200, "POST /api/agent/connectors/{id}/rotate-secret")
      const pass = yield* call(owner.session, "POST", `/api/app/connectors/${connectorId}/passes`)
      assertNoStore(pass, 201, "POST /api/app/connectors/{id}/passes")
      const access = yield* call(secret, "POST", `/api/agent/connectors/${connectorId}/access`, { pass: field(pass, "pass") })
      assertNoStore(access, 200, "POST /api/agent/connectors/{id}/access")
      assert.match(field(access, "session"), /^hcs_/)

      const client = yield* call(undefined, "POST", "/oauth/register", {
        client_name: "No-store client",
        redirect_uris: [REDIRECT_URI],
        token_endpoint_auth_method: "client_secret_post"
      })
      assertNoStore(client, 201, "POST /oauth/register")
      const clientId = field(client, "client_id")
      const clientSecret = field(client, "client_secret")
      assert.match(clientSecret, /^hlc_/)
      const { challenge, verifier } = pkce()
      const { code } = yield* approve(owner.session, { client_id: clientId, code_challenge: challenge })
      const tokens = yield* tokenRequest({
        grant_type: "authorization_code",
        code,
        redirect_uri: REDIRECT_URI,
        code_verifier: verifier,
        client_id: clientId,
        client_secret: clientSecret
      })
      assertNoStore(tokens, 200, "POST /oauth/token")
      assertNoStore(
        yield* revokeRequest({ token: field(tokens, "refresh_token"), client_id: clientId, client_secret: clientSecret }),
        200,
        "POST /oauth/revoke"
      )
    }))

  it.effect("their refusals are no-store too, whoever produced them", () =>
    Effect.gen(function*() {
      const owner = yield* makePerson("nostore-errors")
      // No credential (the bearer middleware), a body that does not decode, an unknown id, a used-up pass.
      assertNoStore(yield* call(undefined, "POST", "/api/app/tokens", { name: "x", scopes: [] }), 401, "tokens without a session")
      assertNoStore(yield* call(owner.session, "POST", "/api/app/tokens", { name: "", scopes: [] }), 400, "tokens with a bad body")
      const secret = field(yield* call(owner.session, "POST", "/api/app/tokens", { name: "agent", scopes }), "secret")
      assertNoStore(yield* call(secret, "POST", "/api/agent/services/svc_unknown/rotate"), 404, "rotate an unknown service")
      assertNoStore(yield* call(secret, "POST", "/api/agent/connectors/conn_unknown/access", { pass: "hcp_unknown" }), 401, "a bad pass")
      // A declared body over the route's limit, answered by the edge before the handler.
      const tooLarge = yield* rawFetch("/api/agent/services", {
        method: "POST",
        headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
        body: JSON.stringify({ title: "x".repeat(2_000_000) })
      })
      assertNoStore(tooLarge, 413, "an oversized body")
      assertNoStore(yield* call(undefined, "POST", "/oauth/register", { redirect_uris: "nope" }), 400, "a bad registration")
      assertNoStore(yield* tokenRequest({ grant_type: "password", client_id: "ocl_unknown" }), 401, "a token request of an unknown client")
      const signIn = yield* rawFetch("/oauth/sign-in?token=hll_unknown")
      assertNoStore(signIn, 400, "an unknown sign-in link")
    }))

  it.effect("routes that hand out no secret are not marked", () =>
    Effect.gen(function*() {
      const owner = yield* makePerson("cacheable")
      const secret = field(yield* call(owner.session, "POST", "/api/app/tokens", { name: "agent", scopes }), "secret")
      for (const [bearer, path] of [[owner.session, "/api/app/tokens"], [secret, "/api/agent/services"], [secret, "/api/agent/connectors"]] as const) {
        const answer = yield* call(bearer, "GET", path)
        assert.strictEqual(answer.status, 200, path)
        assert.isNull(answer.headers.get("cache-control"), path)
      }
      assert.isNull((yield* rawFetch("/healthz")).headers.get("cache-control"))
    }))
})
