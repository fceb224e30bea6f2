/**
 * The OAuth flow as a client and a browser drive it, over raw HTTP against
 * the in-process server (redirects not followed): register, open the
 * consent page as a signed-in person, approve, exchange the code, refresh.
 */
import { Effect } from "effect"
import { createHash, randomBytes } from "node:crypto"
import { rawFetch } from "../../../../test/support/server.ts"
import { AppConfig } from "../../src/config/AppConfig.ts"
import { MCP_PATH } from "../../src/oauth/McpScopes.ts"

export const REDIRECT_URI = "http://127.0.0.1:33418/callback"

export const pkce = () => {
  const verifier = randomBytes(32).toString("base64url")
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") }
}

/** The server's public URL (the issuer) and the MCP resource. */
export const urls = Effect.map(AppConfig, ({ publicUrl }) => ({ issuer: publicUrl, resource: `${publicUrl}${MCP_PATH}` }))

export const registerClient = (body: Record<string, unknown>) =>
  rawFetch("/oauth/register", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })

/** A registered client (public unless `token_endpoint_auth_method` says otherwise). */
export const makeClient = (body: Record<string, unknown> = {}) =>
  Effect.map(
    registerClient({ client_name: "Test client", redirect_uris: [REDIRECT_URI], token_endpoint_auth_method: "none", ...body }),
    (r) => {
      if (r.status !== 201) throw new Error(`registration failed: ${r.status} ${JSON.stringify(r.body)}`)
      return r.body as { client_id: string; client_secret?: string; client_name: string }
    }
  )

export interface AuthorizeParams {
  readonly client_id: string
  readonly redirect_uri?: string
  readonly code_challenge?: string
  readonly code_challenge_method?: string
  readonly response_type?: string
  readonly state?: string
  readonly scope?: string
  readonly resource?: string
}

export const authorizePath = (params: AuthorizeParams) => {
  const query = new URLSearchParams(Object.entries({ response_type: "code", redirect_uri: REDIRECT_URI, code_challenge_method: "S256", state: "st-1", ...params })
    .filter(([, v]) => v !== undefined) as Array<[string, string]>)
  return `/oauth/authorize?${query.toString()}`
}

/** GET the authorization endpoint as the session's browser (a bearer session, or none). */
export const openAuthorize = (params: AuthorizeParams, session?: string) =>
  rawFetch(authorizePath(params), { redirect: "manual", headers: session === undefined ? {} : { authorization: `Bearer ${session}` } })

/** The hidden fields of the consent page's form, and its checkbox scopes. */
export const formOf = (html: string) => {
  const fields: Record<string, string> = {}
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) fields[m[1]!] = unescape(m[2]!)
  const scopes = [...html.matchAll(/name="grant_scope" value="([^"]+)"/g)].map((m) => m[1]!)
  return { fields, scopes }
}

const unescape = (s: string) =>
  s.replace(/&quot;/g, "\"").replace(/&#39;/g, "'").replace(/&lt;/g, "<").replace(/&gt;/g, ">").replace(/&amp;/g, "&")

/** POST the consent form. */
export const postConsent = (fields: Record<string, string>, decision: string, scopes: ReadonlyArray<string>, session?: string) => {
  const body = new URLSearchParams(fields)
  body.set("decision", decision)
  for (const s of scopes) body.append("grant_scope", s)
  return rawFetch("/oauth/authorize", {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded", ...(session === undefined ? {} : { authorization: `Bearer ${session}` }) },
    body: body.toString()
  })
}

/** The query of a redirect's `Location`. */
export const locationOf = (headers: Headers) => {
  const location = headers.get("location")
  if (location === null) throw new Error("no Location")
  return new URL(location)
}

/** Consent shown and approved (with `scopes`, or all shown): the code and the redirect it came on. */
export const approve = (session: string, params: AuthorizeParams, scopes?: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const page = yield* openAuthorize(params, session)
    if (page.status !== 200) throw new Error(`consent page: ${page.status} ${String(page.body).slice(0, 200)}`)
    const form = formOf(page.body as string)
    const answer = yield* postConsent(form.fields, "approve", scopes ?? form.scopes, session)
    if (answer.status !== 302) throw new Error(`consent: ${answer.status} ${String(answer.body).slice(0, 200)}`)
    const location = locationOf(answer.headers)
    return { code: location.searchParams.get("code") ?? "", location }
  })

export const tokenRequest = (form: Record<string, string>, headers: Record<string, string> = {}) =>
  rawFetch("/oauth/token", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams(form).toString()
  })

export interface Tokens {
  readonly access_token: string
  readonly refresh_token: string
  readonly scope: string
  readonly expires_in: number
  readonly token_type: string
}

/** A public client approved by the session's person, with its first tokens. */
export const connect = (session: string, options: { readonly scope?: string; readonly approved?: ReadonlyArray<string> } = {}) =>
  Effect.gen(function*() {
    const client = yield* makeClient()
    const { challenge, verifier } = pkce()
    const { code } = yield* approve(session, { client_id: client.client_id, code_challenge: challenge, ...(options.scope === undefined ? {} : { scope: options.scope }) }, options.approved)
    const exchanged = yield* tokenRequest({ grant_type: "authorization_code", code, redirect_uri: REDIRECT_URI, code_verifier: verifier, client_id: client.client_id })
    if (exchanged.status !== 200) throw new Error(`exchange: ${exchanged.status} ${JSON.stringify(exchanged.body)}`)
    return { client, code, verifier, tokens: exchanged.body as Tokens }
  })

export const refresh = (clientId: string, refreshToken: string, extra: Record<string, string> = {}) =>
  tokenRequest({ grant_type: "refresh_token", refresh_token: refreshToken, client_id: clientId, ...extra })

/** `GET /api/agent/auth/status` with a bearer token: its status. */
export const agentAuthStatus = (token: string) =>
  Effect.map(rawFetch("/api/agent/auth/status", { headers: { authorization: `Bearer ${token}` } }), (r) => r.status)

export const revokeRequest = (form: Record<string, string>, headers: Record<string, string> = {}) =>
  rawFetch("/oauth/revoke", {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", ...headers },
    body: new URLSearchParams(form).toString()
  })
