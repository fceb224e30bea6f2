/**
 * Authenticates API tokens and session tokens without a database round-trip
 * on the hot path: the facade over its parts, each in its own file.
 *
 * - CredentialLookup.ts: what a bearer is (malformed ones refused before any
 *   lookup; an OAuth access token as its grant) and its row when not cached.
 * - CredentialCache.ts: valid credentials by hash; expiry is checked in
 *   memory on every request.
 * - RevocationWatch.ts: revocations reach the cache at once through this
 *   node, within a second from anywhere else; `ended` for long requests.
 * - LastUseWriteBehind.ts: `lastUsedAt` in memory, written back at most once
 *   per credential per minute.
 *
 * `layer` provides the parts to this service only, so one `Credentials` is
 * one cache; the workers (runtime/Workers.ts) run `pollRevocations` and
 * `flushDue` through it.
 */
import type { Scope, Unauthorized } from "@herald/api"
import { Clock, Context, Duration, Effect, Layer, Option } from "effect"
import { CredentialCache } from "./CredentialCache.ts"
import type { CachedCredential } from "./CredentialCache.ts"
import { classify, CredentialLookup, refusals } from "./CredentialLookup.ts"
import type { BearerKind } from "./CredentialLookup.ts"
import { CredentialsRepo } from "./CredentialsRepo.ts"
import type { CredentialRow } from "./CredentialsRepo.ts"
import { LastUseWriteBehind } from "./LastUseWriteBehind.ts"
import { RevocationWatch } from "./RevocationWatch.ts"
import { hashSecret } from "./Secrets.ts"

export interface Credential {
  readonly id: string
  readonly userId: string
  readonly name: string
  readonly prefix: string
  readonly scopes: ReadonlyArray<Scope>
  readonly createdAt: string
  readonly expiresAt: string | null
  /** The freshest use this node knows of (in memory), else the stored one. */
  readonly lastUsedAt: string | null
}

/** Tunables, exposed for tests. */
export interface CredentialsOptions {
  readonly revocationPollInterval: Duration.Input
  readonly flushInterval: Duration.Input
  /** Minimum time between two `last_used_at` writes of one credential. */
  readonly writeEvery: Duration.Input
  /** Entries are re-read after this long even without a revocation (they are cheap). */
  readonly entryTtl: Duration.Input
  readonly maxEntries: number
}

export const defaultCredentialsOptions: CredentialsOptions = {
  revocationPollInterval: "250 millis",
  flushInterval: "10 seconds",
  writeEvery: "1 minute",
  entryTtl: "10 minutes",
  maxEntries: 100_000
}

export class Credentials extends Context.Service<Credentials, {
  readonly authenticateToken: (bearer: string) => Effect.Effect<Credential, Unauthorized>
  readonly authenticateSession: (bearer: string) => Effect.Effect<Credential, Unauthorized>
  /** The cached view of a credential this node authenticated. */
  readonly describe: (id: string) => Option.Option<Credential>
  /** Drops a credential revoked through this node at once. */
  readonly evict: (id: string) => void
  /**
   * Never succeeds: fails with 401 once this node learns the credential was
   * revoked, or when its `expiresAt` passes. A long-lived request races it.
   */
  readonly ended: (id: string) => Effect.Effect<never, Unauthorized>
  /** How many requests race `ended` for this credential now (tests wait on it; none leak). */
  readonly holding: (id: string) => number
  /** Writes pending `lastUsedAt` values now (shutdown, tests). */
  readonly flush: Effect.Effect<void>
  /** One look for revocations made anywhere since the last (a worker runs it every `revocationPollInterval`). */
  readonly pollRevocations: Effect.Effect<void>
  /** Writes the `lastUsedAt` values that are due (a worker runs it every `flushInterval`). */
  readonly flushDue: Effect.Effect<void>
  readonly options: CredentialsOptions
}>()("herald/Credentials") {
  static readonly make = (options: CredentialsOptions) => Effect.gen(function*() {
    const lookup = yield* CredentialLookup
    const cache = yield* CredentialCache
    const watch = yield* RevocationWatch
    const uses = yield* LastUseWriteBehind

    const view = (row: CredentialRow): Credential => ({
      id: row.id,
      userId: row.userId,
      name: row.name,
      prefix: row.prefix,
      scopes: row.scopes,
      createdAt: row.createdAt,
      expiresAt: row.expiresAt,
      lastUsedAt: uses.lastUsedAt(row.id) ?? row.lastUsedAt
    })

    // The hot path: a cache hit is one synchronous step (no database, no
    // intermediate effects); only a miss reads the row.
    const authenticate = (api: BearerKind) => {
      const { expired } = refusals[api]
      const admit = (entry: CachedCredential, now: number): Effect.Effect<Credential, Unauthorized> => {
        if (entry.expiresAtMs <= now) return Effect.fail(expired)
        uses.used(entry.row.id, api, now)
        return Effect.succeed(view(entry.row))
      }
      return (bearer: string): Effect.Effect<Credential, Unauthorized> => {
        const kind = classify(api, bearer)
        if (typeof kind !== "string") return Effect.fail(kind)
        const hash = hashSecret(bearer)
        return Effect.withFiber((fiber) => {
          const now = fiber.getRef(Clock.Clock).currentTimeMillisUnsafe()
          // Only real tokens are cached (by hash), so a hit needs no shape check.
          const cached = cache.fresh(hash, now)
          if (cached !== undefined) return admit(cached, now)
          return Effect.flatMap(lookup.find(api, kind, bearer, hash), (row) => admit(cache.remember(hash, row, now), now))
        })
      }
    }

    return Credentials.of({
      authenticateToken: authenticate("token"),
      authenticateSession: authenticate("session"),
      describe: (id) => {
        const entry = cache.entryOf(id)
        return entry === undefined ? Option.none() : Option.some(view(entry.row))
      },
      evict: watch.revoked,
      ended: watch.ended,
      holding: watch.holding,
      flush: uses.flushAll,
      pollRevocations: watch.poll,
      flushDue: uses.flushDue,
      options
    })
  })

  /** Needs `SqlClient`: the parts are provided here, to this service alone. */
  static readonly layerWith = (options: CredentialsOptions) =>
    Layer.effect(Credentials, Credentials.make(options)).pipe(
      Layer.provide(Layer.mergeAll(CredentialLookup.layerNoDeps, RevocationWatch.layerNoDeps)),
      Layer.provide(Layer.merge(CredentialCache.layerWith(options), LastUseWriteBehind.layerNoDepsWith(options))),
      Layer.provide(CredentialsRepo.layer)
    )
  static readonly layer = Credentials.layerWith(defaultCredentialsOptions)
}
