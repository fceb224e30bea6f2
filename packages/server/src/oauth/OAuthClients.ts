/**
 * Registered OAuth clients: the registration rules (RFC 7591 with OAuth 2.1's
 * redirect-URI rules), lookup, and client authentication at the token and
 * revocation endpoints per the client's registered method.
 */
import {
  ClientRegistered,
  OAUTH_MAX_CLIENT_NAME,
  OAUTH_MAX_REDIRECT_URIS,
  OAUTH_MAX_URI_LENGTH,
  OAuthError,
  oauthError,
  OAuthInvalidClient,
  Scopes
} from "@herald/api"
import type { RegisterClientRequest, Scope, TokenEndpointAuthMethod } from "@herald/api"
import { Context, Effect, Layer, Option } from "effect"
import { timingSafeEqual } from "node:crypto"
import { generateSecret, hashSecret } from "../auth/Secrets.ts"
import { makeId } from "../lib/Ids.ts"
import { ClientsRepo } from "./ClientsRepo.ts"
import type { ClientRow } from "./ClientsRepo.ts"
import { UNCLAIMED_CLIENT_TTL_SECONDS } from "./Lifetimes.ts"

/** The longest `scope` string read (22 scopes fit in far less). */
export const MAX_SCOPE_LENGTH = 1000

const DEFAULT_CLIENT_NAME = "Unnamed client"
const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"])
// Schemes a browser runs or reads locally, or that are not redirect targets at all.
const REFUSED_SCHEMES = new Set(["javascript:", "data:", "file:", "vbscript:", "blob:", "about:", "filesystem:", "ws:", "wss:", "ftp:", "mailto:", "tel:", "sms:"])
const PRIVATE_SCHEME = /^[a-z][a-z0-9+.-]*:$/
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/

/** Why a redirect URI is refused, or undefined when it is acceptable. */
export const redirectUriProblem = (uri: unknown): string | undefined => {
  if (typeof uri !== "string" || uri.length === 0) return "each redirect URI must be a non-empty string"
  if (uri.length > OAUTH_MAX_URI_LENGTH) return `a redirect URI is at most ${OAUTH_MAX_URI_LENGTH} characters`
  if (CONTROL.test(uri) || uri.includes(" ")) return "a redirect URI has no spaces or control characters"
  if (uri.includes("#")) return "a redirect URI has no fragment"
  let url: URL
  try {
    url = new URL(uri)
  } catch {
    return `not an absolute URI: ${uri}`
  }
  const scheme = url.protocol.toLowerCase()
  if (REFUSED_SCHEMES.has(scheme)) return `the ${scheme} scheme is not allowed`
  if (scheme === "https:" || scheme === "http:") {
    if (url.username !== "" || url.password !== "") return "a redirect URI has no user information"
    if (scheme === "http:" && !LOOPBACK_HOSTS.has(url.hostname)) return "http is allowed only for a loopback host (localhost, 127.0.0.1, [::1]); use https"
    return undefined
  }
  return PRIVATE_SCHEME.test(scheme) ? undefined : `the scheme ${scheme} is not allowed`
}

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
  readonly register: (request: RegisterClientRequest) => Effect.Effect<ClientRegistered, OAuthError>
  readonly find: (clientId: string) => Effect.Effect<Option.Option<ClientRow>>
  /** The client a token or revocation request authenticates as, per its registered method. */
  readonly authenticate: (credentials: ClientCredentials) => Effect.Effect<ClientRow, OAuthInvalidClient>
  /** Deletes clients nobody approved within 24 hours; how many. */
  readonly sweepUnclaimed: (limit: number) => Effect.Effect<number>
}>()("herald/oauth/OAuthClients") {
  static readonly layerNoDeps = Layer.effect(OAuthClients, Effect.gen(function*() {
    const repo = yield* ClientsRepo

    const register = Effect.fn("OAuthClients.register")(function*(request: RegisterClientRequest) {
      const uris = request.redirect_uris
      if (!Array.isArray(uris) || uris.length === 0 || uris.length > OAUTH_MAX_REDIRECT_URIS) {
        return yield* oauthError("invalid_redirect_uri", `redirect_uris must be an array of 1 to ${OAUTH_MAX_REDIRECT_URIS} URIs`)
      }
      for (const uri of uris) {
        const problem = redirectUriProblem(uri)
        if (problem !== undefined) return yield* oauthError("invalid_redirect_uri", problem)
      }
      const redirectUris = [...new Set(uris as ReadonlyArray<string>)]

      const name = request.client_name ?? DEFAULT_CLIENT_NAME
      if (typeof name !== "string" || name.trim() === "" || name.length > OAUTH_MAX_CLIENT_NAME || CONTROL.test(name)) {
        return yield* metadataError(`client_name must be 1 to ${OAUTH_MAX_CLIENT_NAME} characters without control characters`)
      }
      const clientUri = request.client_uri ?? null
      if (clientUri !== null && (typeof clientUri !== "string" || clientUri.length > OAUTH_MAX_URI_LENGTH || !isHttpsUrl(clientUri))) {
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
      const row = yield* repo.insert({
        id: yield* makeId("ocl"),
        name,
        redirectUris,
        tokenEndpointAuthMethod: method as TokenEndpointAuthMethod,
        secretHash: secret === undefined ? null : hashSecret(secret),
        clientUri,
        scope
      })
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
      find: (clientId) => clientId.length > 100 ? Effect.succeed(Option.none()) : repo.find(clientId),
      authenticate,
      sweepUnclaimed: (limit) => repo.deleteUnclaimed(UNCLAIMED_CLIENT_TTL_SECONDS, limit)
    })
  }))

  static readonly layer = OAuthClients.layerNoDeps.pipe(Layer.provide(ClientsRepo.layer))
}
