/**
 * What a bearer is, and its credential when the cache does not have it:
 *
 * - A malformed bearer (wrong prefix, length or checksum) is refused before
 *   any lookup; the other kind of Herald token, sent to the wrong API, is
 *   named as such, with the kind this API takes.
 * - The Agent API takes an OAuth access token (`hlo_…`) too: it is read as
 *   its grant, an ApiToken of kind `oauth`, so revoking that token signs the
 *   client out like any other.
 * - A revoked row is refused as unknown.
 */
import { Unauthorized } from "@herald/api"
import { Context, Effect, Layer, Option } from "effect"
import { CredentialsRepo } from "./CredentialsRepo.ts"
import type { CredentialKind, CredentialRow } from "./CredentialsRepo.ts"
import { isWellFormed } from "./Secrets.ts"

/** Which API a bearer is presented to: the Agent API (tokens) or the Person API (sessions). */
export type BearerKind = "token" | "session"

const unauthorized = (error: string) => new Unauthorized({ error })

const refusalsOf = (kind: BearerKind) => {
  const what = kind === "token" ? "API token" : "session token"
  return {
    missing: unauthorized(`Missing bearer ${what}: send Authorization: Bearer <token>.`),
    malformed: unauthorized(`Malformed ${what}.`),
    wrongKind: unauthorized(kind === "token"
      ? "Wrong kind of token: a session token (hls_…) was sent, and the Agent API takes an API token (hld_…), " +
        "created with POST /api/app/tokens."
      : "Wrong kind of token: an API token (hld_…) was sent, and the Person API takes a session token (hls_…), " +
        "created with `herald admin session create`."),
    unknown: unauthorized(`Unknown or revoked ${what}.`),
    expired: unauthorized(`Expired ${what}.`)
  }
}

/** The refusals of each API, built once: the hot path allocates none. */
export const refusals = { token: refusalsOf("token"), session: refusalsOf("session") } as const

/**
 * The kind of credential `bearer` claims to be by its prefix, or the refusal
 * (no shape check beyond the prefix: a cached hash needs none).
 */
export const classify = (kind: BearerKind, bearer: string): CredentialKind | Unauthorized => {
  const refused = refusals[kind]
  if (bearer === "") return refused.missing
  // Tokens and sessions share the cache: the kind's prefix keeps a session
  // from passing as an API token (and back) on a cache hit.
  if (kind === "token" && bearer.startsWith("hlo_")) return "access"
  if (bearer.startsWith(kind === "token" ? "hld_" : "hls_")) return kind
  return bearer.startsWith(kind === "token" ? "hls_" : "hld_") ? refused.wrongKind : refused.malformed
}

const secretKind = { token: "hld", session: "hls", access: "hlo" } as const

export class CredentialLookup extends Context.Service<CredentialLookup, {
  /** The live credential of `bearer` (of `kind`, hashing to `hash`), read from the database. */
  readonly find: (api: BearerKind, kind: CredentialKind, bearer: string, hash: string) => Effect.Effect<CredentialRow, Unauthorized>
}>()("herald/CredentialLookup") {
  static readonly layerNoDeps = Layer.effect(CredentialLookup, Effect.gen(function*() {
    const repo = yield* CredentialsRepo
    return CredentialLookup.of({
      find: (api, kind, bearer, hash) => {
        if (!isWellFormed(bearer, secretKind[kind])) return Effect.fail(refusals[api].malformed)
        return Effect.flatMap(repo.findByHash(kind, hash), (row) =>
          Option.isNone(row) || row.value.revokedAt !== null ? Effect.fail(refusals[api].unknown) : Effect.succeed(row.value))
      }
    })
  }))
}
