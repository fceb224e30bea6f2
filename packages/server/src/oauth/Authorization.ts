/**
 * The authorization endpoint's rules: validate an authorization request
 * (RFC 6749 §4.1 with OAuth 2.1's PKCE S256 and exact redirect-URI match,
 * RFC 8707 resource), show the consent page to the signed-in person, check
 * the form they post back (session, CSRF token, the request again) and
 * issue a one-time code. A request whose client or redirect URI cannot be
 * trusted answers an error page, never a redirect (an open redirector).
 * Other refusals go back to the client's redirect URI only when the client
 * is trusted — a person approved it before, or the operator registered it —
 * since anyone can register a client with any redirect URI (RFC 9700
 * §4.11.2); for any other client they are the error page too.
 */
import type { AuthorizeQuery, ConsentForm, OAuthErrorCode, Scope } from "@herald/api"
import { Context, Data, Effect, Layer, Option } from "effect"
import type { HttpServerResponse } from "effect/http"
import { createHmac, timingSafeEqual } from "node:crypto"
import { generateSecret, hashSecret } from "../auth/Secrets.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { ServerSecrets } from "../db/ServerSecrets.ts"
import { Identity } from "../identity/Identity.ts"
import type { ClientRow } from "./ClientsRepo.ts"
import { consentPage, errorPage, redirectTo, signInPage } from "./ConsentPage.ts"
import { GrantsRepo } from "./GrantsRepo.ts"
import { CODE_TTL_SECONDS } from "./Lifetimes.ts"
import { MCP_PATH, MCP_SCOPES } from "./McpScopes.ts"
import { MAX_SCOPE_LENGTH, OAuthClients, parseScopes } from "./OAuthClients.ts"
import { isChallenge } from "./Pkce.ts"
import type { SignedIn } from "./BrowserSession.ts"

/** The longest `state` carried (it comes back on the redirect). */
export const MAX_STATE_LENGTH = 2000

/** A refusal shown as a page: the client or its redirect URI is not trusted. */
class PageRefusal extends Data.TaggedError("PageRefusal")<{ readonly status: number; readonly title: string; readonly message: string }> {}

/** A refusal sent back to the client's redirect URI. */
class RedirectRefusal extends Data.TaggedError("RedirectRefusal")<{
  readonly redirectUri: string
  readonly state: string | undefined
  readonly error: OAuthErrorCode
  readonly description: string
}> {}

/** An authorization request that passed every check. */
interface Valid {
  readonly client: ClientRow
  readonly redirectUri: string
  readonly state: string | undefined
  readonly codeChallenge: string
  readonly scopes: ReadonlyArray<Scope>
  readonly resource: string | undefined
  /** The request's fields as received, carried by the form and bound by the CSRF token. */
  readonly fields: Readonly<Record<string, string>>
}

const REQUEST_FIELDS = ["response_type", "client_id", "redirect_uri", "code_challenge", "code_challenge_method", "state", "scope", "resource"] as const

export class Authorization extends Context.Service<Authorization, {
  /** `GET /oauth/authorize`: the consent page, the sign-in page, an error page or a redirect with an error. */
  readonly show: (query: AuthorizeQuery, session: Option.Option<SignedIn>, pathAndQuery: string) => Effect.Effect<HttpServerResponse.HttpServerResponse>
  /** `POST /oauth/authorize`: the person's decision. */
  readonly decide: (form: ConsentForm, session: Option.Option<SignedIn>) => Effect.Effect<HttpServerResponse.HttpServerResponse>
}>()("herald/Authorization") {
  static readonly layerNoDeps = Layer.effect(Authorization, Effect.gen(function*() {
    const clients = yield* OAuthClients
    const grants = yield* GrantsRepo
    const identity = yield* Identity
    const secrets = yield* ServerSecrets
    const { publicUrl } = yield* AppConfig
    const issuer = publicUrl
    const resourceUrl = `${publicUrl}${MCP_PATH}`

    const redirectWith = (redirectUri: string, params: Record<string, string | undefined>) => {
      const url = new URL(redirectUri)
      for (const [key, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(key, value)
      return redirectTo(url.toString())
    }

    const validate = Effect.fn("Authorization.validate")(function*(query: AuthorizeQuery) {
      const clientId = query.client_id ?? ""
      const client = clientId === "" ? Option.none<ClientRow>() : yield* clients.find(clientId)
      if (Option.isNone(client)) {
        return yield* new PageRefusal({ status: 400, title: "Unknown application", message: "This authorization request names no client registered here (client_id). Nothing was shared." })
      }
      const redirectUri = query.redirect_uri ?? ""
      // Exact string match against the registered URIs (OAuth 2.1 §4.1.1): anything else could leak the code.
      if (!client.value.redirectUris.includes(redirectUri)) {
        return yield* new PageRefusal({ status: 400, title: "Wrong redirect address", message: "The redirect_uri of this request is not one the application registered. Nothing was shared." })
      }
      const state = query.state
      const trusted = client.value.approvedAt !== null || client.value.registeredVia === "operator"
      const refuse = (error: OAuthErrorCode, description: string) =>
        trusted
          ? new RedirectRefusal({ redirectUri, state: state !== undefined && state.length <= MAX_STATE_LENGTH ? state : undefined, error, description })
          : new PageRefusal({
            status: 400,
            title: "Invalid authorization request",
            message: `The application sent a request Herald cannot accept (${error}: ${description}). ` +
              "It has not been approved here before, so you are not sent back to it. Nothing was shared."
          })
      if (state !== undefined && state.length > MAX_STATE_LENGTH) return yield* refuse("invalid_request", `state is at most ${MAX_STATE_LENGTH} characters`)
      if (query.response_type !== "code") return yield* refuse("unsupported_response_type", "response_type must be code")
      if (query.code_challenge === undefined) return yield* refuse("invalid_request", "code_challenge is required (PKCE S256)")
      if (query.code_challenge_method !== "S256") return yield* refuse("invalid_request", "code_challenge_method must be S256 (plain is not supported)")
      if (!isChallenge(query.code_challenge)) return yield* refuse("invalid_request", "code_challenge must be BASE64URL(SHA-256(code_verifier)), 43 characters")
      const allowed = client.value.scope === null ? undefined : client.value.scope.split(" ")
      let scopes: ReadonlyArray<Scope>
      if (query.scope === undefined || query.scope.trim() === "") {
        scopes = allowed === undefined ? MCP_SCOPES : (allowed as ReadonlyArray<Scope>)
      } else {
        if (query.scope.length > MAX_SCOPE_LENGTH) return yield* refuse("invalid_scope", "scope is too long")
        const parsed = parseScopes(query.scope)
        if ("unknown" in parsed) return yield* refuse("invalid_scope", `unknown scope: ${parsed.unknown.join(" ")}`)
        const beyond = allowed === undefined ? [] : parsed.scopes.filter((s) => !allowed.includes(s))
        if (beyond.length > 0) return yield* refuse("invalid_scope", `the client did not register the scope ${beyond.join(" ")}`)
        scopes = parsed.scopes
      }
      if (query.resource !== undefined && query.resource !== resourceUrl) {
        return yield* refuse("invalid_target", `resource must be ${resourceUrl}`)
      }
      const fields: Record<string, string> = {}
      for (const name of REQUEST_FIELDS) {
        const value = query[name]
        if (value !== undefined) fields[name] = value
      }
      return { client: client.value, redirectUri, state, codeChallenge: query.code_challenge, scopes, resource: query.resource, fields } satisfies Valid
    })

    const csrfKey = yield* secrets.key("oauth-consent-csrf")
    /** HMAC-SHA256 of the session and the request: a form posted from elsewhere, or for another request, fails. */
    const csrfOf = (sessionId: string, valid: Valid) =>
      createHmac("sha256", Buffer.from(csrfKey, "hex"))
        .update(JSON.stringify([sessionId, ...REQUEST_FIELDS.map((name) => valid.fields[name] ?? null)]))
        .digest("base64url")
    const csrfMatches = (expected: string, given: string | undefined) => {
      if (given === undefined) return false
      const a = Buffer.from(expected)
      const b = Buffer.from(given)
      return a.length === b.length && timingSafeEqual(a, b)
    }

    const refusal = (error: PageRefusal | RedirectRefusal) =>
      error._tag === "PageRefusal"
        ? errorPage(error.status, error.title, error.message)
        : redirectWith(error.redirectUri, { error: error.error, error_description: error.description, state: error.state, iss: issuer })

    const show = Effect.fn("Authorization.show")(function*(query: AuthorizeQuery, session: Option.Option<SignedIn>, pathAndQuery: string) {
      const valid = yield* validate(query)
      if (Option.isNone(session)) return signInPage(pathAndQuery)
      const person = yield* identity.me(session.value.userId).pipe(Effect.option)
      if (Option.isNone(person)) return signInPage(pathAndQuery)
      return consentPage({
        clientName: valid.client.name,
        clientId: valid.client.id,
        redirectHost: redirectHostOf(valid.redirectUri),
        person: person.value,
        scopes: valid.scopes,
        hidden: { ...valid.fields, csrf_token: csrfOf(session.value.sessionId, valid) }
      })
    }, (effect) => Effect.catch(effect, (e) => Effect.succeed(refusal(e))))

    const decide = Effect.fn("Authorization.decide")(function*(form: ConsentForm, session: Option.Option<SignedIn>) {
      const valid = yield* validate(form)
      if (Option.isNone(session)) {
        return errorPage(403, "Not signed in", "Your sign-in expired or was revoked. Open the application's link again and sign in.")
      }
      if (!csrfMatches(csrfOf(session.value.sessionId, valid), form.csrf_token)) {
        return errorPage(403, "This form has expired", "The form does not match your session or the request. Open the application's link again.")
      }
      const back = (params: Record<string, string | undefined>) => redirectWith(valid.redirectUri, { ...params, state: valid.state, iss: issuer })
      if (form.decision !== "approve") return back({ error: "access_denied", error_description: "The person denied the request." })
      const checked = [...new Set(form.grant_scope ?? [])]
      const unrequested = checked.filter((s) => !(valid.scopes as ReadonlyArray<string>).includes(s))
      if (unrequested.length > 0) return back({ error: "invalid_scope", error_description: `not requested: ${unrequested.join(" ")}` })
      if (checked.length === 0) return back({ error: "access_denied", error_description: "No scope was approved." })
      const code = generateSecret("hla")
      // The first approval makes the client trusted (error redirects, kept by the sweep while it has grants).
      yield* clients.markApproved(valid.client.id)
      yield* grants.insertCode({
        codeHash: hashSecret(code),
        clientId: valid.client.id,
        userId: session.value.userId,
        redirectUri: valid.redirectUri,
        codeChallenge: valid.codeChallenge,
        scopes: checked as ReadonlyArray<Scope>,
        resource: valid.resource ?? null,
        ttlSeconds: CODE_TTL_SECONDS
      })
      return back({ code })
    }, (effect) => Effect.catch(effect, (e) => Effect.succeed(refusal(e))))

    return Authorization.of({ show, decide })
  }))
}

/** What the page shows of where the person goes back: the host, or the scheme of an app's private-use URI. */
const redirectHostOf = (uri: string) => {
  const url = new URL(uri)
  return url.host !== "" ? url.host : url.protocol
}
