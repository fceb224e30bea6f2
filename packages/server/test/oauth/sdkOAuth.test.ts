/**
 * The official MCP SDK (`@modelcontextprotocol/sdk`) does the whole OAuth
 * flow against the in-process server, configured with nothing but the MCP
 * endpoint's URL: the endpoint's 401 sends it to discovery, it registers
 * itself, sends the person to the consent page (driven over HTTP here, with
 * the session cookie a one-time sign-in link set), exchanges the code with
 * PKCE, then lists and calls tools — an `ask` the person answers through the
 * Person API —, refreshes (rotating the refresh token), appears among the
 * person's tokens as kind `oauth`, and is signed out by revoking that token:
 * its next call is refused and its refresh is `invalid_grant`.
 *
 * The server's public URL is `https://herald.example` (as behind a reverse
 * proxy); the SDK's fetch maps that origin to the test server.
 */
import { assert, layer } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { auth, discoverAuthorizationServerMetadata, refreshAuthorization, UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js"
import type { OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { InvalidGrantError } from "@modelcontextprotocol/sdk/server/auth/errors.js"
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js"
import { Effect, Fiber } from "effect"
import { eventually } from "../../../../test/support/eventually.ts"
import { makePerson, personClient, registerDevice, TestServer, testServerLayer } from "../../../../test/support/server.ts"
import { MCP_PATH, MCP_SCOPES } from "../../src/oauth/McpScopes.ts"
import { SignInLinks } from "../../src/oauth/SignInLinks.ts"

const PUBLIC_URL = "https://herald.example"
const MCP_URL = new URL(`${PUBLIC_URL}${MCP_PATH}`)

/** The SDK's fetch: the public origin is served by the test server (what a reverse proxy does). */
const proxiedFetch = (baseUrl: string) => (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
  const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url
  if (!url.startsWith(`${PUBLIC_URL}/`)) return Promise.reject(new Error(`the SDK left the server: ${url}`))
  const local = `${baseUrl}${url.slice(PUBLIC_URL.length)}`
  return fetch(input instanceof Request ? new Request(local, input) : local, init)
}

/**
 * An in-memory `OAuthClientProvider` like the SDK's example one; what
 * `redirectToAuthorization` does (drive the consent page, or only note the
 * request) is the test's choice.
 */
class TestProvider implements OAuthClientProvider {
  private information: OAuthClientInformationMixed | undefined
  private saved: OAuthTokens | undefined
  private verifier: string | undefined
  readonly invalidated: Array<string> = []
  readonly authorizations: Array<URL> = []
  readonly clientMetadata: OAuthClientMetadata
  onRedirect: (url: URL) => Promise<void>
  constructor(clientMetadata: OAuthClientMetadata, onRedirect: (url: URL) => Promise<void>) {
    this.clientMetadata = clientMetadata
    this.onRedirect = onRedirect
  }
  get redirectUrl() {
    return this.clientMetadata.redirect_uris[0]!
  }
  clientInformation() {
    return this.information
  }
  saveClientInformation(information: OAuthClientInformationMixed) {
    this.information = information
  }
  tokens() {
    return this.saved
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens
  }
  async redirectToAuthorization(url: URL) {
    this.authorizations.push(url)
    await this.onRedirect(url)
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier
  }
  codeVerifier() {
    if (this.verifier === undefined) throw new Error("No code verifier saved")
    return this.verifier
  }
  invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery") {
    this.invalidated.push(scope)
    if (scope === "all" || scope === "tokens") this.saved = undefined
  }
}

const decodeEntities = (text: string) =>
  text.replace(/&quot;/g, "\"").replace(/&#39;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&")

/** What a browser submits when Approve is pressed: the hidden fields, the checked boxes, the button. */
const approveForm = (html: string) => {
  const form = new URLSearchParams()
  for (const [tag] of html.matchAll(/<input\b[^>]*>/g)) {
    const attr = (name: string) => {
      const m = new RegExp(`\\b${name}="([^"]*)"`).exec(tag)
      return m === null ? undefined : decodeEntities(m[1]!)
    }
    const type = attr("type")
    if (type === "hidden" || (type === "checkbox" && /\bchecked\b/.test(tag))) form.append(attr("name")!, attr("value") ?? "")
  }
  const button = /<button\b[^>]*name="([^"]*)"[^>]*value="(approve)"[^>]*>/i.exec(html)
  assert.isNotNull(button, "the consent page has an Approve button")
  form.append(button![1]!, button![2]!)
  return form
}

/** Signs a browser in as the person with a one-time link; answers its `herald_session` cookie. */
const signInBrowser = (fetchFn: typeof fetch, personId: string) =>
  Effect.gen(function*() {
    const link = yield* (yield* SignInLinks).create(personId)
    assert.isTrue(link.url.startsWith(`${PUBLIC_URL}/oauth/sign-in?token=hll_`))
    const response = yield* Effect.promise(() => fetchFn(link.url, { redirect: "manual" }))
    assert.strictEqual(response.status, 200)
    const cookie = response.headers.getSetCookie().find((c) => c.startsWith("herald_session="))
    assert.isDefined(cookie)
    assert.include(cookie!.toLowerCase(), "; secure")
    return cookie!.split(";")[0]!
  })

/** The code each provider's consent produced (what the redirect URI would receive). */
const codes = new Map<TestProvider, string>()

/** The person at the consent page: opens the authorization URL signed in, presses Approve, and hands back the code. */
const approve = (fetchFn: typeof fetch, cookie: string, provider: TestProvider) => async (url: URL) => {
  assert.strictEqual(`${url.origin}${url.pathname}`, `${PUBLIC_URL}/oauth/authorize`)
  assert.strictEqual(url.searchParams.get("response_type"), "code")
  assert.strictEqual(url.searchParams.get("code_challenge_method"), "S256")
  assert.strictEqual(url.searchParams.get("resource"), MCP_URL.href)
  assert.deepStrictEqual(url.searchParams.get("scope")?.split(" ").sort(), [...MCP_SCOPES].sort())
  const page = await fetchFn(url, { headers: { cookie }, redirect: "manual" })
  const html = await page.text()
  assert.strictEqual(page.status, 200, html)
  assert.include(html, provider.clientMetadata.client_name!)
  const form = approveForm(html)
  assert.deepStrictEqual(form.getAll("grant_scope").sort(), [...MCP_SCOPES].sort())
  const decided = await fetchFn(`${PUBLIC_URL}/oauth/authorize`, {
    method: "POST",
    headers: { cookie, origin: PUBLIC_URL, "content-type": "application/x-www-form-urlencoded" },
    body: form.toString(),
    redirect: "manual"
  })
  assert.strictEqual(decided.status, 302, await decided.text())
  const location = new URL(decided.headers.get("location")!)
  assert.strictEqual(`${location.origin}${location.pathname}`, provider.redirectUrl)
  assert.strictEqual(location.searchParams.get("iss"), PUBLIC_URL)
  assert.match(location.searchParams.get("code") ?? "", /^hla_/)
  codes.set(provider, location.searchParams.get("code")!)
}

const newClient = async (provider: TestProvider, fetchFn: typeof fetch) => {
  const client = new Client({ name: "herald-sdk-oauth-test", version: "1.0.0" })
  const transport = new StreamableHTTPClientTransport(MCP_URL, { authProvider: provider, fetch: fetchFn })
  await client.connect(transport)
  return client
}

/** The text content of a tool result, parsed as JSON. */
const resultJson = (result: Awaited<ReturnType<Client["callTool"]>>) => {
  const content = result.content as ReadonlyArray<{ type: string; text?: string }>
  return JSON.parse(content.find((c) => c.type === "text")!.text!) as Record<string, unknown>
}

const connectedClient = (clientMetadata: OAuthClientMetadata) =>
  Effect.gen(function*() {
    const { baseUrl } = yield* TestServer
    const fetchFn = proxiedFetch(baseUrl) as typeof fetch
    const { person, session } = yield* makePerson("Ada")
    const app = yield* personClient(session)
    yield* registerDevice({ app }, "sdk-oauth-")
    const cookie = yield* signInBrowser(fetchFn, person.id)

    // Only the URL: the 401 starts discovery, registration and the consent page; the code finishes it.
    const provider: TestProvider = new TestProvider(clientMetadata, async (url) => approve(fetchFn, cookie, provider)(url))
    const first = new Client({ name: "herald-sdk-oauth-test", version: "1.0.0" })
    const firstTransport = new StreamableHTTPClientTransport(MCP_URL, { authProvider: provider, fetch: fetchFn })
    const refused = yield* Effect.promise(() => first.connect(firstTransport).then(() => undefined, (e: unknown) => e))
    assert.instanceOf(refused, UnauthorizedError)
    const information = provider.clientInformation()!
    assert.match(information.client_id, /^ocl_/)
    if (clientMetadata.token_endpoint_auth_method === "client_secret_post") {
      assert.match(information.client_secret ?? "", /^hlc_/)
    } else {
      assert.isUndefined(information.client_secret)
    }
    yield* Effect.promise(() => firstTransport.finishAuth(codes.get(provider)!))
    const tokens = provider.tokens()!
    assert.match(tokens.access_token, /^hlo_/)
    assert.match(tokens.refresh_token ?? "", /^hlr_/)
    assert.strictEqual(tokens.token_type.toLowerCase(), "bearer")
    assert.deepStrictEqual(tokens.scope?.split(" ").sort(), [...MCP_SCOPES].sort())
    yield* Effect.promise(() => first.close())

    const client = yield* Effect.promise(() => newClient(provider, fetchFn))
    return { client, provider, fetchFn, app }
  })

const journey = (clientMetadata: OAuthClientMetadata) =>
  Effect.gen(function*() {
    const { app, client, fetchFn, provider } = yield* connectedClient(clientMetadata)
    const tools = yield* Effect.promise(() => client.listTools())
    assert.deepStrictEqual(tools.tools.map((t) => t.name).sort(), ["ask", "cancel", "inbox", "notify", "page", "progress", "wait"])

    // The agent asks; the person answers on the phone (the Person API) while the tool call waits.
    const asking = yield* Effect.forkChild(Effect.promise(() =>
      client.callTool({ name: "ask", arguments: { kind: "approval", title: "Deploy to production?", prompt: "Release 4.2" } })
    ))
    const pending = yield* eventually(app.interactions.list(), (list) => list.items.length > 0)
    const prompt = pending.items[0]!
    assert.strictEqual(prompt.title, "Deploy to production?")
    yield* app.interactions.answer({ params: { id: prompt.id }, payload: { status: "approved" } })
    const answered = yield* Fiber.join(asking)
    assert.notStrictEqual(answered.isError, true)
    const interaction = resultJson(answered).interaction as { id: string; status: string }
    assert.deepStrictEqual([interaction.id, interaction.status], [prompt.id, "approved"])

    // The SDK refreshes: a new access token and a new refresh token (rotation), which keep working.
    const before = provider.tokens()!
    assert.strictEqual(yield* Effect.promise(() => auth(provider, { serverUrl: MCP_URL, fetchFn })), "AUTHORIZED")
    const after = provider.tokens()!
    assert.match(after.access_token, /^hlo_/)
    assert.match(after.refresh_token ?? "", /^hlr_/)
    assert.notStrictEqual(after.access_token, before.access_token)
    assert.notStrictEqual(after.refresh_token, before.refresh_token)
    assert.strictEqual((yield* Effect.promise(() => client.listTools())).tools.length, 7)

    // Among the person's tokens: one of kind oauth, naming the client.
    const manager = yield* app.tokens.create({ payload: { name: "manager", scopes: ["tokens:manage"] } })
    const agentApi = (path: string, method = "GET") =>
      Effect.promise(() =>
        fetchFn(`${PUBLIC_URL}/api/agent${path}`, { method, headers: { authorization: `Bearer ${manager.secret}` } })
          .then(async (r) => ({ status: r.status, body: await r.json() as any }))
      )
    const listed = yield* agentApi("/tokens")
    const grants = (listed.body.items as Array<any>).filter((t) => t.kind === "oauth")
    assert.strictEqual(grants.length, 1)
    assert.deepStrictEqual(grants[0].oauthClient, { clientId: provider.clientInformation()!.client_id, name: clientMetadata.client_name })
    assert.deepStrictEqual([...grants[0].scopes].sort(), [...MCP_SCOPES].sort())
    assert.strictEqual(grants[0].revokedAt ?? null, null)

    // Signed out: revoking the token refuses its next call at once, and its refresh is invalid_grant.
    const revoked = yield* agentApi(`/tokens/${grants[0].id}`, "DELETE")
    assert.strictEqual(revoked.status, 200)
    const last = provider.tokens()!
    provider.onRedirect = async () => {} // the person is not asked again here
    const refused = yield* Effect.promise(() => client.listTools().then(() => undefined, (e: unknown) => e))
    assert.instanceOf(refused, UnauthorizedError)
    // The SDK tried its refresh token, was told invalid_grant, dropped its tokens and asked for a new authorization.
    assert.include(provider.invalidated, "tokens")
    assert.isUndefined(provider.tokens())
    assert.strictEqual(provider.authorizations.length, 2)
    const metadata = (yield* Effect.promise(() => discoverAuthorizationServerMetadata(PUBLIC_URL, { fetchFn })))!
    assert.strictEqual(metadata.token_endpoint, `${PUBLIC_URL}/oauth/token`)
    const refresh = yield* Effect.promise(() =>
      refreshAuthorization(PUBLIC_URL, { metadata, clientInformation: provider.clientInformation()!, refreshToken: last.refresh_token!, fetchFn })
        .then(() => undefined, (e: unknown) => e)
    )
    assert.instanceOf(refresh, InvalidGrantError)
    const direct = yield* Effect.promise(() =>
      fetchFn(`${PUBLIC_URL}/api/agent/auth/status`, { headers: { authorization: `Bearer ${last.access_token}` } }).then((r) => r.status)
    )
    assert.strictEqual(direct, 401)
    const mcp = yield* Effect.promise(() =>
      fetchFn(MCP_URL, {
        method: "POST",
        headers: {
          authorization: `Bearer ${last.access_token}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream"
        },
        body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" })
      }).then((r) => ({ status: r.status, challenge: r.headers.get("www-authenticate") ?? "" }))
    )
    assert.strictEqual(mcp.status, 401)
    assert.include(mcp.challenge, "error=\"invalid_token\"")
    yield* Effect.promise(() => client.close())
  })

layer(testServerLayer({ HERALD_PUBLIC_URL: PUBLIC_URL }), { timeout: "120 seconds", excludeTestServices: true })(
  "the MCP SDK's OAuth client",
  (it) => {
    it.effect("a public client (PKCE, no secret): connect, approve, ask, refresh, listed as oauth, revoked", () =>
      journey({
        client_name: "SDK public client",
        redirect_uris: ["http://127.0.0.1:33418/callback"],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "none"
      }), { timeout: 120_000 })

    it.effect("the SDK example's confidential client (client_secret_post): the same journey", () =>
      // node_modules/@modelcontextprotocol/sdk/dist/esm/examples/client/simpleOAuthClient.js, verbatim.
      journey({
        client_name: "Simple OAuth MCP Client",
        redirect_uris: ["http://localhost:8090/callback"],
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        token_endpoint_auth_method: "client_secret_post"
      }), { timeout: 120_000 })
  }
)
