/**
 * Discovery and dynamic client registration over HTTP: both metadata
 * documents, public and confidential registration (the secret shown once,
 * stored hashed), each refusal in the RFC 7591 shape, and the sweep that
 * deletes clients nobody approved within a day.
 */
import { assert, layer } from "@effect/vitest"
import { Scopes } from "@herald/api"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { makePerson, rawFetch, TestServerLayer } from "../../../../test/support/server.ts"
import { hashSecret } from "../../src/auth/Secrets.ts"
import { MCP_SCOPES } from "../../src/oauth/McpScopes.ts"
import { OAuthSweep } from "../../src/oauth/Sweep.ts"
import { connect, makeClient, REDIRECT_URI, registerClient, urls } from "./flow.ts"

const clientRow = (id: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ secretHash: string | null; method: string }>`
      SELECT secret_hash, token_endpoint_auth_method AS method FROM oauth_clients WHERE id = ${id}`).pipe(Effect.orDie)

const age = (id: string, hours: number) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE oauth_clients SET created_at = now() - make_interval(hours => ${hours}) WHERE id = ${id}`).pipe(Effect.orDie)

layer(TestServerLayer, { timeout: 60_000 })("OAuth discovery and registration", (it) => {
  it.effect("the authorization server metadata (RFC 8414)", () =>
    Effect.gen(function*() {
      const { issuer } = yield* urls
      const r = yield* rawFetch("/.well-known/oauth-authorization-server")
      assert.strictEqual(r.status, 200)
      const body = r.body as Record<string, unknown>
      assert.strictEqual(body.issuer, issuer)
      assert.strictEqual(body.authorization_endpoint, `${issuer}/oauth/authorize`)
      assert.strictEqual(body.token_endpoint, `${issuer}/oauth/token`)
      assert.strictEqual(body.registration_endpoint, `${issuer}/oauth/register`)
      assert.strictEqual(body.revocation_endpoint, `${issuer}/oauth/revoke`)
      assert.deepStrictEqual(body.response_types_supported, ["code"])
      assert.deepStrictEqual(body.grant_types_supported, ["authorization_code", "refresh_token"])
      assert.deepStrictEqual(body.code_challenge_methods_supported, ["S256"])
      assert.deepStrictEqual(body.token_endpoint_auth_methods_supported, ["none", "client_secret_post", "client_secret_basic"])
      assert.deepStrictEqual(body.scopes_supported, [...Scopes])
      assert.isString(body.service_documentation)
    }))

  it.effect("the MCP endpoint's protected-resource metadata (RFC 9728)", () =>
    Effect.gen(function*() {
      const { issuer, resource } = yield* urls
      const r = yield* rawFetch("/.well-known/oauth-protected-resource/api/agent/mcp")
      assert.strictEqual(r.status, 200)
      const body = r.body as Record<string, unknown>
      assert.strictEqual(body.resource, resource)
      assert.deepStrictEqual(body.authorization_servers, [issuer])
      assert.deepStrictEqual(body.scopes_supported, [...MCP_SCOPES])
      assert.deepStrictEqual(body.bearer_methods_supported, ["header"])
    }))

  it.effect("the OAuth routes have their own OpenAPI document, errors in the OAuth shape", () =>
    Effect.gen(function*() {
      const r = yield* rawFetch("/oauth/openapi.json")
      assert.strictEqual(r.status, 200)
      const doc = r.body as { paths: Record<string, Record<string, unknown>>; components: { schemas: Record<string, { properties?: Record<string, unknown> }> } }
      assert.deepStrictEqual(Object.keys(doc.paths).sort(), [
        "/.well-known/oauth-authorization-server",
        "/.well-known/oauth-protected-resource/api/agent/mcp",
        "/oauth/authorize",
        "/oauth/register",
        "/oauth/revoke",
        "/oauth/sign-in",
        "/oauth/token"
      ])
      assert.deepStrictEqual(Object.keys(doc.paths["/oauth/authorize"]!).sort(), ["get", "post"])
      assert.deepStrictEqual(Object.keys(doc.components.schemas.OAuthErrorEncoded!.properties!).sort(), ["error", "error_description"])
    }))

  it.effect("a public client registers without a secret", () =>
    Effect.gen(function*() {
      const r = yield* registerClient({
        client_name: "Cursor",
        redirect_uris: ["cursor://anysphere.cursor-retrieval/oauth/callback", "http://localhost:6274/cb", "http://[::1]:1/cb", "https://app.example/cb"],
        token_endpoint_auth_method: "none",
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        scope: "inbox:read notifications:send",
        client_uri: "https://cursor.example",
        software_id: "ignored"
      })
      assert.strictEqual(r.status, 201)
      const body = r.body as Record<string, unknown>
      assert.match(body.client_id as string, /^ocl_/)
      assert.isNumber(body.client_id_issued_at)
      assert.isUndefined(body.client_secret)
      assert.strictEqual(body.client_name, "Cursor")
      assert.strictEqual(body.token_endpoint_auth_method, "none")
      assert.deepStrictEqual(body.grant_types, ["authorization_code", "refresh_token"])
      assert.deepStrictEqual(body.response_types, ["code"])
      assert.strictEqual(body.scope, "inbox:read notifications:send")
      assert.strictEqual(body.client_uri, "https://cursor.example")
      const [row] = yield* clientRow(body.client_id as string)
      assert.isNull(row!.secretHash)
    }))

  it.effect("a confidential client gets an hlc_ secret once, stored only as its hash; the RFC's default method is basic", () =>
    Effect.gen(function*() {
      for (const [sent, method] of [["client_secret_post", "client_secret_post"], [undefined, "client_secret_basic"]] as const) {
        const r = yield* registerClient({ redirect_uris: [REDIRECT_URI], ...(sent === undefined ? {} : { token_endpoint_auth_method: sent }) })
        assert.strictEqual(r.status, 201)
        const body = r.body as { client_id: string; client_secret: string; client_secret_expires_at: number; token_endpoint_auth_method: string; client_name: string }
        assert.strictEqual(body.token_endpoint_auth_method, method)
        assert.match(body.client_secret, /^hlc_/)
        assert.strictEqual(body.client_secret_expires_at, 0)
        assert.strictEqual(body.client_name, "Unnamed client")
        const [row] = yield* clientRow(body.client_id)
        assert.strictEqual(row!.secretHash, hashSecret(body.client_secret))
        assert.strictEqual(row!.method, method)
      }
    }))

  it.effect("each refusal answers 400 in the RFC 7591 shape", () =>
    Effect.gen(function*() {
      const ok = { redirect_uris: [REDIRECT_URI] }
      const cases: ReadonlyArray<readonly [Record<string, unknown>, string]> = [
        [{}, "invalid_redirect_uri"],
        [{ redirect_uris: [] }, "invalid_redirect_uri"],
        [{ redirect_uris: "https://a.example/cb" }, "invalid_redirect_uri"],
        [{ redirect_uris: Array.from({ length: 11 }, (_, i) => `https://a.example/${i}`) }, "invalid_redirect_uri"],
        [{ redirect_uris: [`https://a.example/${"x".repeat(2000)}`] }, "invalid_redirect_uri"],
        [{ redirect_uris: ["http://a.example/cb"] }, "invalid_redirect_uri"],
        [{ redirect_uris: ["https://a.example/cb#frag"] }, "invalid_redirect_uri"],
        [{ redirect_uris: ["javascript:alert(1)"] }, "invalid_redirect_uri"],
        [{ redirect_uris: ["data:text/html,hi"] }, "invalid_redirect_uri"],
        [{ redirect_uris: ["file:///etc/passwd"] }, "invalid_redirect_uri"],
        [{ redirect_uris: ["/relative"] }, "invalid_redirect_uri"],
        [{ redirect_uris: [42] }, "invalid_redirect_uri"],
        [{ redirect_uris: ["https://user:pw@a.example/cb"] }, "invalid_redirect_uri"],
        [{ ...ok, client_name: "x".repeat(101) }, "invalid_client_metadata"],
        [{ ...ok, client_name: "" }, "invalid_client_metadata"],
        [{ ...ok, client_name: 7 }, "invalid_client_metadata"],
        [{ ...ok, client_uri: "http://a.example" }, "invalid_client_metadata"],
        [{ ...ok, grant_types: ["client_credentials"] }, "invalid_client_metadata"],
        [{ ...ok, grant_types: ["refresh_token"] }, "invalid_client_metadata"],
        [{ ...ok, grant_types: ["authorization_code", "implicit"] }, "invalid_client_metadata"],
        [{ ...ok, response_types: ["token"] }, "invalid_client_metadata"],
        [{ ...ok, token_endpoint_auth_method: "private_key_jwt" }, "invalid_client_metadata"],
        [{ ...ok, scope: "inbox:read nope:nope" }, "invalid_client_metadata"],
        [{ ...ok, scope: ["inbox:read"] }, "invalid_client_metadata"]
      ]
      for (const [body, error] of cases) {
        const r = yield* registerClient(body)
        assert.strictEqual(r.status, 400, JSON.stringify(body).slice(0, 100))
        assert.strictEqual((r.body as { error: string }).error, error, JSON.stringify(body).slice(0, 100))
        assert.isString((r.body as { error_description: string }).error_description)
        assert.isUndefined((r.body as { code?: string }).code)
      }
      const notJson = yield* rawFetch("/oauth/register", { method: "POST", headers: { "content-type": "application/json" }, body: "{" })
      assert.strictEqual(notJson.status, 400)
      assert.strictEqual((notJson.body as { error: string }).error, "invalid_request")
    }))

  it.effect("the unauthenticated OAuth routes take bodies of 16 KiB at most (413 beyond)", () =>
    Effect.gen(function*() {
      const big = JSON.stringify({ redirect_uris: ["https://app.example/cb"], client_name: "x".repeat(17 * 1024) })
      const register = yield* rawFetch("/oauth/register", { method: "POST", headers: { "content-type": "application/json" }, body: big })
      assert.strictEqual(register.status, 413)
      const form = new URLSearchParams({ grant_type: "refresh_token", refresh_token: "x".repeat(17 * 1024) }).toString()
      for (const path of ["/oauth/token", "/oauth/revoke", "/oauth/authorize"]) {
        const r = yield* rawFetch(path, { method: "POST", headers: { "content-type": "application/x-www-form-urlencoded" }, body: form })
        assert.strictEqual(r.status, 413, path)
      }
    }))

  it.effect("the sweep deletes clients nobody approved within 24 hours, and keeps approved ones", () =>
    Effect.gen(function*() {
      const { session } = yield* makePerson("sweep")
      const fresh = yield* makeClient()
      const stale = yield* makeClient()
      const { client: approved } = yield* connect(session)
      yield* age(stale.client_id, 25)
      yield* age(approved.client_id, 25)
      const sweep = yield* OAuthSweep
      const result = yield* sweep.sweep
      assert.isAtLeast(result.clients, 1)
      assert.strictEqual((yield* clientRow(stale.client_id)).length, 0)
      assert.strictEqual((yield* clientRow(fresh.client_id)).length, 1)
      assert.strictEqual((yield* clientRow(approved.client_id)).length, 1)
    }))

  it.effect("the sweep deletes expired access tokens and refresh tokens and old codes", () =>
    Effect.gen(function*() {
      const { session } = yield* makePerson("expired")
      const { code, tokens } = yield* connect(session)
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE oauth_access_tokens SET expires_at = now() - interval '1 minute' WHERE token_hash = ${hashSecret(tokens.access_token)}`
      yield* sql`UPDATE oauth_refresh_grants SET expires_at = now() - interval '1 minute' WHERE token_hash = ${hashSecret(tokens.refresh_token)}`
      yield* sql`UPDATE oauth_codes SET expires_at = now() - interval '2 days' WHERE code_hash = ${hashSecret(code)}`
      const sweep = yield* OAuthSweep
      assert.isAtLeast((yield* sweep.sweep).expired, 3)
      const left = yield* sql<{ n: number }>`
        SELECT ((SELECT count(*) FROM oauth_access_tokens WHERE token_hash = ${hashSecret(tokens.access_token)})
              + (SELECT count(*) FROM oauth_refresh_grants WHERE token_hash = ${hashSecret(tokens.refresh_token)})
              + (SELECT count(*) FROM oauth_codes WHERE code_hash = ${hashSecret(code)}))::int AS n`
      assert.strictEqual(left[0]!.n, 0)
    }).pipe(Effect.orDie))
})
