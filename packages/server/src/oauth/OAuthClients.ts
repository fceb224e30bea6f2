/**
 * Registered OAuth clients: the registration rules (RFC 7591 with OAuth 2.1's
 * redirect-URI rules, RedirectUris.ts), who may register (the operator's
 * switch: open, an initial access token, or closed), the bounds on what
 * anonymous registration can store (a global rate, a cap on clients waiting
 * for a first approval), lookup, and client authentication at the token and
 * revocation endpoints per the client's registered method.
 */
import {
  ClientRegistered,
  OAUTH_MAX_CLIENT_NAME,
  OAUTH_MAX_URI_LENGTH,
  OAuthAccessDenied,
  OAuthError,
  oauthError,
  OAuthInvalidClient,
  OAuthInvalidToken,
  Scopes
} from "@herald/api"
import type { RegisterClientRequest, Scope, TokenEndpointAuthMethod } from "@herald/api"
import { Clock, Context, Data, Effect, Layer, Option, Redacted } from "effect"
import { createHash, timingSafeEqual } from "node:crypto"
import { generateSecret, hashSecret } from "../auth/Secrets.ts"
import { Gcra } from "../billing/Gcra.ts"
import { OAuthConfig } from "../config/OAuthConfig.ts"
import { makeId } from "../lib/Ids.ts"
import { ClientsRepo } from "./ClientsRepo.ts"
import type { ClientRow, RegisteredVia } from "./ClientsRepo.ts"
import { SWEEP_EVERY_SECONDS, UNCLAIMED_CLIENT_TTL_SECONDS } from "./Lifetimes.ts"
import { CONTROL, redirectUrisProblem } from "./RedirectUris.ts"

/** The longest `scope` string read (22 scopes fit in far less). */
export const MAX_SCOPE_LENGTH = 1000

const DEFAULT_CLIENT_NAME = "Unnamed client"

/** How the operator registers a client when registration is closed (the 403 says it). */
export const OPERATOR_REGISTRATION_HINT =
  "herald admin oauth-client create --name NAME --redirect-uri URI (repeat --redirect-uri for more; --auth-method none for a client without a secret)"

/** Registration is bounded right now (the global rate or the cap): the handler answers 429 with `Retry-After`. */
export class RegistrationThrottled extends Data.TaggedError("RegistrationThrottled")<{
  readonly description: string
  readonly retryAfterSeconds: number
}> {}

/** What a registration may fail with. */
export type RegisterError = OAuthError | OAuthInvalidToken | OAuthAccessDenied | RegistrationThrottled

/** The scopes of a space-separated `scope` string, or the unknown names. */
export const parseScopes = (scope: string): { readonly scopes: ReadonlyArray<Scope> } | { readonly unknown: ReadonlyArray<string> } => {
  const names = [...new Set(scope.split(" ").filter((s) => s !== ""))]
  const unknown = names.filter((n) => !(Scopes as ReadonlyArray<string>).includes(n))
  return unknown.length > 0 ? { unknown } : { scopes: names as ReadonlyArray<Scope> }
}

const isHttpsUrl = (value: string) => {
  try {
    return new URL(value).protocol === "https:"
  } catch {
    return false
  }
}

const metadataError = (description: string) => oauthError("invalid_client_metadata", description)

/** SHA-256 of both sides first: equal lengths for timingSafeEqual whatever was sent, so the time says nothing. */
const sameToken = (expected: Redacted.Redacted<string>, given: string) =>
  timingSafeEqual(createHash("sha256").update(Redacted.value(expected)).digest(), createHash("sha256").update(given).digest())

const sameSecret = (hash: string, secret: string) => {
  const a = Buffer.from(hash)
  const b = Buffer.from(hashSecret(secret))
  return a.length === b.length && timingSafeEqual(a, b)
}

/** What a request presents to authenticate its client. */
export interface ClientCredentials {
  readonly clientId: string | undefined
  readonly clientSecret: string | undefined
  /** The `Authorization` header, for `client_secret_basic`. */
  readonly authorization: string | undefined
}

/** `Authorization: Basic` of RFC 6749 §2.3.1: id and secret form-encoded, then base64. */
const basicCredentials = (authorization: string): { id: string; secret: string } | undefined => {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(authorization.trim())
  if (match === null) return undefined
  const decoded = Buffer.from(match[1]!, "base64").toString("utf8")
  const colon = decoded.indexOf(":")
  if (colon === -1) return undefined
  try {
    const decode = (s: string) => decodeURIComponent(s.replace(/\+/g, " "))
    return { id: decode(decoded.slice(0, colon)), secret: decode(decoded.slice(colon + 1)) }
  } catch {
    return undefined
  }
}

export class OAuthClients extends Context.Service<OAuthClients, {
  /** `POST /oauth/register`: `authorization` is the request's `Authorization` header (the initial access token). */
  readonly register: (request: RegisterClientRequest, authorization: string | undefined) => Effect.Effect<ClientRegistered, RegisterError>
  /** `herald admin oauth-client create`: the same rules, no switch or bound; the client is trusted (operator-registered). */
  readonly registerAsOperator: (request: RegisterClientRequest) => Effect.Effect<ClientRegistered, OAuthError>
  readonly find: (clientId: string) => Effect.Effect<Option.Option<ClientRow>>
  /** Records that a person approved the client (consent issued a code). */
  readonly markApproved: (clientId: string) => Effect.Effect<void>
  /** Deletes a client with its grants; false when there is none. */
  readonly remove: (clientId: string) => Effect.Effect<boolean>
  /** The client a token or revocation request authenticates as, per its registered method. */
  readonly authenticate: (credentials: ClientCredentials) => Effect.Effect<ClientRow, OAuthInvalidClient>
  /** Deletes up to `limit` clients nobody approved within the short TTL, or without a grant for 24 hours; how many. */
  readonly sweepUnclaimed: (limit: number) => Effect.Effect<number>
}>()("herald/OAuthClients") {
  static readonly layerNoDeps = Layer.effect(OAuthClients, Effect.gen(function*() {
    const repo = yield* ClientsRepo
    const config = yield* OAuthConfig
    // One key: every caller together. In memory on each node, a guard (a restart forgets it; docs/operations.md).
    const globalLimit = config.registrationsPerMinute > 0 ? new Gcra(config.registrationsPerMinute) : undefined

    /** Checks the metadata, then `admit` (the bounds, for anonymous registration), then stores the client. */
    const insert = <E>(request: RegisterClientRequest, via: RegisteredVia, admit: Effect.Effect<void, E>) => Effect.gen(function*() {
      const uris = request.redirect_uris
      const uriProblem = redirectUrisProblem(uris, config.extraPrivateSchemes)
      if (uriProblem !== undefined) return yield* oauthError("invalid_redirect_uri", uriProblem)
      const redirectUris = [...new Set(uris as ReadonlyArray<string>)]

      const name = request.client_name ?? DEFAULT_CLIENT_NAME
      if (typeof name !== "string" || name.trim() === "" || name.length > OAUTH_MAX_CLIENT_NAME || CONTROL.test(name)) {
        return yield* metadataError(`client_name must be 1 to ${OAUTH_MAX_CLIENT_NAME} characters without control characters`)
      }
      const clientUri = request.client_uri ?? null
      if (clientUri !== null && (typeof clientUri !== "string" || clientUri.length > OAUTH_MAX_URI_LENGTH || CONTROL.test(clientUri) || !isHttpsUrl(clientUri))) {
        return yield* metadataError(`client_uri must be an https URL of at most ${OAUTH_MAX_URI_LENGTH} characters`)
      }
      const grantTypes = request.grant_types ?? ["authorization_code", "refresh_token"]
      if (
        !Array.isArray(grantTypes) || !grantTypes.includes("authorization_code") ||
        grantTypes.some((g) => g !== "authorization_code" && g !== "refresh_token")
      ) {
        return yield* metadataError("grant_types must include authorization_code and may add refresh_token, nothing else")
      }
      const responseTypes = request.response_types ?? ["code"]
      if (!Array.isArray(responseTypes) || responseTypes.length !== 1 || responseTypes[0] !== "code") {
        return yield* metadataError("response_types must be [\"code\"]")
      }
      // RFC 7591 §2: client_secret_basic when absent.
      const method = request.token_endpoint_auth_method ?? "client_secret_basic"
      if (method !== "none" && method !== "client_secret_post" && method !== "client_secret_basic") {
        return yield* metadataError("token_endpoint_auth_method must be none, client_secret_post or client_secret_basic")
      }
      let scope: string | null = null
      if (request.scope !== undefined) {
        if (typeof request.scope !== "string" || request.scope.length > MAX_SCOPE_LENGTH) {
          return yield* metadataError("scope must be a space-separated string of scopes")
        }
        const parsed = parseScopes(request.scope)
        if ("unknown" in parsed) return yield* metadataError(`unknown scope: ${parsed.unknown.join(" ")}`)
        scope = parsed.scopes.length === 0 ? null : parsed.scopes.join(" ")
      }

      const secret = method === "none" ? undefined : generateSecret("hlc")
      const id = yield* makeId("ocl")
      // Bounds after the checks: a malformed request stores nothing, so it does not spend the shared budget.
      // The bounds and the insert commit together: the cap's count holds its lock until the client is stored.
      const row = yield* repo.inTransaction(Effect.andThen(admit, repo.insert({
        id,
        name,
        redirectUris,
        tokenEndpointAuthMethod: method as TokenEndpointAuthMethod,
        secretHash: secret === undefined ? null : hashSecret(secret),
        clientUri,
        scope,
        registeredVia: via
      })))
      return new ClientRegistered({
        client_id: row.id,
        client_id_issued_at: Math.floor(Date.parse(row.createdAt) / 1000),
        ...(secret === undefined ? {} : { client_secret: secret, client_secret_expires_at: 0 }),
        client_name: row.name,
        ...(row.clientUri === null ? {} : { client_uri: row.clientUri }),
        redirect_uris: row.redirectUris,
        grant_types: [...new Set(grantTypes as ReadonlyArray<string>)],
        response_types: ["code"],
        token_endpoint_auth_method: row.tokenEndpointAuthMethod,
        ...(row.scope === null ? {} : { scope: row.scope })
      })
    }).pipe(Effect.withSpan("OAuthClients.insert"))

    /** The global rate, then the cap on clients waiting for a first approval (counted up to the cap only). */
    const admitAnonymous: Effect.Effect<void, RegistrationThrottled> = Effect.gen(function*() {
      if (globalLimit !== undefined) {
        const now = yield* Clock.currentTimeMillis
        const decision = globalLimit.check("register", now)
        if (!decision.allowed) {
          const retryAfterSeconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000))
          return yield* new RegistrationThrottled({
            description: `Client registrations on this server are at their limit (${config.registrationsPerMinute} a minute); retry in ${retryAfterSeconds} s.`,
            retryAfterSeconds
          })
        }
        globalLimit.commit("register", decision.next)
      }
      if (config.maxUnapprovedClients > 0 && (yield* repo.countUnapproved(config.maxUnapprovedClients)) >= config.maxUnapprovedClients) {
        return yield* new RegistrationThrottled({
          description: "Too many registered clients are waiting for a first approval on this server; retry later.",
          // Nothing frees a place before the next sweep, unless a person approves one of them.
          retryAfterSeconds: SWEEP_EVERY_SECONDS
        })
      }
    })

    const register = Effect.fn("OAuthClients.register")(function*(request: RegisterClientRequest, authorization: string | undefined) {
      if (config.registration === "closed") {
        return yield* new OAuthAccessDenied({
          error: "access_denied",
          error_description: `Client registration is closed on this server. The operator registers a client with: ${OPERATOR_REGISTRATION_HINT}`
        })
      }
      let via: RegisteredVia = "open"
      if (config.registration === "token") {
        const bearer = authorization === undefined ? undefined : /^Bearer\s+(\S+)\s*$/i.exec(authorization)?.[1]
        if (bearer === undefined || Option.isNone(config.registrationToken) || !sameToken(config.registrationToken.value, bearer)) {
          return yield* new OAuthInvalidToken({
            error: "invalid_token",
            error_description: "Registration needs the operator's initial access token: Authorization: Bearer <token> (RFC 7591 §3)."
          })
        }
        via = "token"
      }
      return yield* insert(request, via, admitAnonymous)
    })

    const invalidClient = (description: string) => new OAuthInvalidClient({ error: "invalid_client", error_description: description })

    const authenticate = Effect.fn("OAuthClients.authenticate")(function*(credentials: ClientCredentials) {
      const basic = credentials.authorization === undefined ? undefined : basicCredentials(credentials.authorization)
      if (credentials.authorization !== undefined && /^Basic\s/i.test(credentials.authorization) && basic === undefined) {
        return yield* invalidClient("Malformed Basic client credentials.")
      }
      if (basic !== undefined && credentials.clientId !== undefined && credentials.clientId !== basic.id) {
        return yield* invalidClient("client_id differs from the Basic credentials.")
      }
      const clientId = basic?.id ?? credentials.clientId
      if (clientId === undefined || clientId === "" || clientId.length > 100) return yield* invalidClient("Send client_id.")
      const found = yield* repo.find(clientId)
      if (Option.isNone(found)) return yield* invalidClient("Unknown client.")
      const client = found.value
      switch (client.tokenEndpointAuthMethod) {
        case "none":
          if (basic !== undefined || credentials.clientSecret !== undefined) {
            return yield* invalidClient("This client is public (token_endpoint_auth_method none): send no secret.")
          }
          return client
        case "client_secret_post":
          if (basic !== undefined) return yield* invalidClient("This client authenticates with client_secret_post.")
          if (credentials.clientSecret === undefined || !sameSecret(client.secretHash ?? "", credentials.clientSecret)) {
            return yield* invalidClient("Wrong or missing client_secret.")
          }
          return client
        case "client_secret_basic":
          if (basic === undefined || credentials.clientSecret !== undefined) {
            return yield* invalidClient("This client authenticates with client_secret_basic (Authorization: Basic).")
          }
          if (!sameSecret(client.secretHash ?? "", basic.secret)) return yield* invalidClient("Wrong client secret.")
          return client
      }
    })

    return OAuthClients.of({
      register,
      registerAsOperator: (request) => insert(request, "operator", Effect.void),
      find: (clientId) => clientId.length > 100 ? Effect.succeed(Option.none()) : repo.find(clientId),
      markApproved: repo.markApproved,
      // Deleting the rows alone would leave their tokens in every node's credential cache (10 minutes): revoke
      // first, give the revocation polls (every 250 ms) time to see it, then delete.
      remove: (clientId) =>
        clientId.length > 100 ? Effect.succeed(false) : repo.revokeGrants(clientId).pipe(
          Effect.flatMap((revoked) => revoked > 0 ? Effect.sleep("2 seconds") : Effect.void),
          Effect.andThen(repo.remove(clientId))
        ),
      authenticate,
      sweepUnclaimed: (limit) =>
        repo.deleteUnclaimed({ unapprovedSeconds: config.unapprovedClientTtlSeconds, unclaimedSeconds: UNCLAIMED_CLIENT_TTL_SECONDS, limit })
    })
  }))

  static readonly layer = OAuthClients.layerNoDeps.pipe(Layer.provide([ClientsRepo.layer, OAuthConfig.layer]))
}
