/**
 * The token endpoint's grants and revocation: an authorization code
 * exchanged once (PKCE S256, same client and redirect URI) for a new grant —
 * one `api_tokens` row of kind `oauth` per person and client — and its first
 * access and refresh tokens; refresh tokens that rotate on every use; and
 * the two replays that revoke a grant outright (a code used twice, a used
 * refresh token presented again), since either means a secret leaked.
 * Revoking goes through Identity, so the credential cache forgets every
 * access token of the grant at once.
 */
import { oauthError, TokenResponse } from "@herald/api"
import type { OAuthError, Scope, TokenRequest } from "@herald/api"
import { Context, Effect, Layer, Option } from "effect"
import { randomUUID } from "node:crypto"
import { displayPrefix, generateSecret, hashSecret, isWellFormed } from "../auth/Secrets.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { Identity } from "../identity/Identity.ts"
import { makeId } from "../lib/Ids.ts"
import type { ClientRow } from "./ClientsRepo.ts"
import { GrantsRepo } from "./GrantsRepo.ts"
import { ACCESS_TOKEN_TTL_SECONDS, REFRESH_TOKEN_TTL_SECONDS } from "./Lifetimes.ts"
import { MCP_PATH } from "./McpScopes.ts"
import { MAX_SCOPE_LENGTH, parseScopes } from "./OAuthClients.ts"
import { verifies } from "./Pkce.ts"

export class Tokens extends Context.Service<Tokens, {
  /** `POST /oauth/token` for an authenticated client. */
  readonly exchange: (client: ClientRow, request: TokenRequest) => Effect.Effect<TokenResponse, OAuthError>
  /** `POST /oauth/revoke`: revokes the client's grant behind an access or refresh token; nothing for another's or an unknown one. */
  readonly revoke: (client: ClientRow, token: string) => Effect.Effect<void>
}>()("herald/Tokens") {
  static readonly layerNoDeps = Layer.effect(Tokens, Effect.gen(function*() {
    const repo = yield* GrantsRepo
    const identity = yield* Identity
    const { publicUrl } = yield* AppConfig
    const resourceUrl = `${publicUrl}${MCP_PATH}`

    /** Revokes a grant: its row, its refresh tokens, and (through the cache) its access tokens. */
    const revokeGrant = (userId: string, tokenId: string) => Effect.ignore(identity.revokeToken(userId, tokenId))

    /** A new access and refresh pair of a grant. */
    const issuePair = Effect.fn("Tokens.issuePair")(function*(tokenId: string, grantScopes: ReadonlyArray<Scope>, accessScopes: ReadonlyArray<Scope>) {
      const access = generateSecret("hlo")
      const refresh = generateSecret("hlr")
      yield* repo.insertAccess({ tokenHash: hashSecret(access), tokenId, scopes: accessScopes, ttlSeconds: ACCESS_TOKEN_TTL_SECONDS })
      yield* repo.insertRefresh({ id: randomUUID(), tokenHash: hashSecret(refresh), tokenId, scopes: grantScopes, ttlSeconds: REFRESH_TOKEN_TTL_SECONDS })
      return new TokenResponse({
        access_token: access,
        token_type: "Bearer",
        expires_in: ACCESS_TOKEN_TTL_SECONDS,
        refresh_token: refresh,
        scope: accessScopes.join(" ")
      })
    })

    const checkResource = (resource: string | undefined) =>
      resource === undefined || resource === resourceUrl
        ? Effect.void
        : Effect.fail(oauthError("invalid_target", `resource must be ${resourceUrl}`))

    const authorizationCode = Effect.fn("Tokens.authorizationCode")(function*(client: ClientRow, request: TokenRequest) {
      const code = request.code ?? ""
      if (code === "" || request.redirect_uri === undefined || request.code_verifier === undefined) {
        return yield* oauthError("invalid_request", "code, redirect_uri and code_verifier are required")
      }
      const invalid = oauthError("invalid_grant", "The code is unknown, expired, already used, or not this client's.")
      if (!isWellFormed(code, "hla")) return yield* invalid
      const codeHash = hashSecret(code)
      const found = yield* repo.findCode(codeHash)
      if (Option.isNone(found) || found.value.clientId !== client.id) return yield* invalid
      const row = found.value
      if (row.used) {
        // A code presented twice leaked somewhere: the grant issued from it goes too.
        if (row.tokenId !== null) yield* revokeGrant(row.userId, row.tokenId)
        return yield* invalid
      }
      if (row.expired) return yield* invalid
      if (row.redirectUri !== request.redirect_uri) return yield* oauthError("invalid_grant", "redirect_uri differs from the authorization request's.")
      if (!verifies(request.code_verifier, row.codeChallenge)) return yield* oauthError("invalid_grant", "code_verifier does not match the code_challenge.")
      if (request.resource !== undefined && row.resource !== null && request.resource !== row.resource) {
        return yield* oauthError("invalid_target", "resource differs from the authorization request's.")
      }
      yield* checkResource(request.resource)

      const issued = yield* repo.inTransaction(Effect.gen(function*() {
        // The row lock makes a concurrent second exchange wait, then find the code used.
        if (!(yield* repo.consumeCode(codeHash))) return Option.none<{ tokenId: string; previous: ReadonlyArray<string>; response: TokenResponse }>()
        // One ApiToken per connected client: a new approval replaces the person's earlier grant.
        const previous = yield* repo.liveGrants(row.userId, client.id)
        const tokenId = yield* makeId("tok")
        // The grant row is the ApiToken; its own secret is never issued (clients hold access/refresh tokens).
        const unissued = generateSecret("hlo")
        yield* repo.insertGrant({
          id: tokenId,
          userId: row.userId,
          clientId: client.id,
          name: client.name,
          prefix: displayPrefix(unissued),
          tokenHash: hashSecret(unissued),
          scopes: row.scopes
        })
        yield* repo.setCodeGrant(codeHash, tokenId)
        const response = yield* issuePair(tokenId, row.scopes, row.scopes)
        return Option.some({ tokenId, previous, response })
      }))
      if (Option.isNone(issued)) {
        const again = yield* repo.findCode(codeHash)
        if (Option.isSome(again) && again.value.tokenId !== null) yield* revokeGrant(row.userId, again.value.tokenId)
        return yield* invalid
      }
      for (const id of issued.value.previous) yield* revokeGrant(row.userId, id)
      return issued.value.response
    })

    const refreshToken = Effect.fn("Tokens.refreshToken")(function*(client: ClientRow, request: TokenRequest) {
      const token = request.refresh_token ?? ""
      if (token === "") return yield* oauthError("invalid_request", "refresh_token is required")
      const invalid = oauthError("invalid_grant", "The refresh token is unknown, expired, revoked, already used, or not this client's.")
      if (!isWellFormed(token, "hlr")) return yield* invalid
      const found = yield* repo.findRefresh(hashSecret(token))
      if (Option.isNone(found) || found.value.clientId !== client.id) return yield* invalid
      const row = found.value
      if (row.revoked || row.expired) return yield* invalid
      if (row.used) {
        // Rotation means a used refresh token is a stolen copy (or the thief already used it): end the grant.
        yield* revokeGrant(row.userId, row.tokenId)
        return yield* invalid
      }
      let scopes = row.grantScopes
      if (request.scope !== undefined && request.scope.trim() !== "") {
        if (request.scope.length > MAX_SCOPE_LENGTH) return yield* oauthError("invalid_scope", "scope is too long")
        const parsed = parseScopes(request.scope)
        if ("unknown" in parsed) return yield* oauthError("invalid_scope", `unknown scope: ${parsed.unknown.join(" ")}`)
        const beyond = parsed.scopes.filter((s) => !row.grantScopes.includes(s))
        if (beyond.length > 0) return yield* oauthError("invalid_scope", `beyond the grant: ${beyond.join(" ")}`)
        scopes = parsed.scopes
      }
      yield* checkResource(request.resource)
      const rotated = yield* repo.inTransaction(Effect.gen(function*() {
        if (!(yield* repo.consumeRefresh(row.id))) return Option.none<TokenResponse>()
        return Option.some(yield* issuePair(row.tokenId, row.grantScopes, scopes))
      }))
      if (Option.isNone(rotated)) {
        // Another request used it first: the same reuse, seen a moment later.
        yield* revokeGrant(row.userId, row.tokenId)
        return yield* invalid
      }
      return rotated.value
    })

    const exchange = Effect.fn("Tokens.exchange")(function*(client: ClientRow, request: TokenRequest) {
      switch (request.grant_type) {
        case "authorization_code":
          return yield* authorizationCode(client, request)
        case "refresh_token":
          return yield* refreshToken(client, request)
        case undefined:
          return yield* oauthError("invalid_request", "grant_type is required")
        default:
          return yield* oauthError("unsupported_grant_type", "grant_type must be authorization_code or refresh_token")
      }
    })

    const revoke = Effect.fn("Tokens.revoke")(function*(client: ClientRow, token: string) {
      const grant = isWellFormed(token, "hlo")
        ? yield* repo.findAccess(hashSecret(token))
        : isWellFormed(token, "hlr")
        ? yield* Effect.map(repo.findRefresh(hashSecret(token)), Option.map((r) => ({ tokenId: r.tokenId, userId: r.userId, clientId: r.clientId })))
        : Option.none()
      // RFC 7009 §2.2: an unknown token, or another client's, is answered like a revoked one.
      if (Option.isSome(grant) && grant.value.clientId === client.id) yield* revokeGrant(grant.value.userId, grant.value.tokenId)
    })

    return Tokens.of({ exchange, revoke })
  }))
}
