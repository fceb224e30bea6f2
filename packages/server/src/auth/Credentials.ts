/**
 * Authenticates API tokens and session tokens without a database round-trip
 * on the hot path. The Agent API takes an OAuth access token (`hlo_…`) too:
 * it authenticates as its grant, an ApiToken of kind `oauth`, so revoking that
 * token signs the client out like any other.
 *
 * - A malformed token (wrong prefix, length or checksum) is refused before any
 *   lookup.
 * - Valid credentials are cached by hash. Revocation reaches the cache two
 *   ways: at once for revocations made through this node, and through a poller
 *   that asks the database every 250 ms for rows revoked since its last look,
 *   so a revocation made on another node (or by the CLI) takes effect here
 *   within a second. Expiry is checked in memory on every request.
 * - A request that outlives its authentication (a long-poll) races `ended`:
 *   it fails with 401 the moment this node learns of the revocation (at once,
 *   or at the next poll) or when the credential's `expiresAt` passes.
 * - `lastUsedAt` is kept in memory and written back by a background flush, at
 *   most once per credential per minute.
 */
import { Unauthorized } from "@herald/api"
import type { Scope } from "@herald/api"
import { Clock, Context, Deferred, Duration, Effect, Layer, Option } from "effect"
import { IdentityRepo } from "../identity/Repo.ts"
import type { CredentialRow } from "../identity/Repo.ts"
import { CredentialsRepo } from "./Repo.ts"
import { hashSecret, isWellFormed } from "./Secrets.ts"

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

interface Entry {
  readonly row: CredentialRow
  readonly expiresAtMs: number
  readonly loadedAt: number
}

interface Usage {
  lastUsedAt: string
  lastUsedMs: number
  writtenMs: number
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

const unauthorized = (error: string) => new Unauthorized({ error })

/** `writtenMs` of a use not yet written: earlier than any clock reading. */
const NEVER = Number.NEGATIVE_INFINITY

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
    const repo = yield* IdentityRepo
    const authRepo = yield* CredentialsRepo
    const entries = new Map<string, Entry>() // by hash
    // One credential may have several cached hashes: a grant's access tokens.
    const hashById = new Map<string, Set<string>>()
    const usage = new Map<string, Usage & { kind: "token" | "session" }>()
    const ttlMs = Duration.toMillis(Duration.fromInputUnsafe(options.entryTtl))
    const writeEveryMs = Duration.toMillis(Duration.fromInputUnsafe(options.writeEvery))
    // Requests racing `ended`, by credential id: completed on revocation.
    const watchers = new Map<string, Set<Deferred.Deferred<void>>>()

    const evict = (id: string) => {
      const waiting = watchers.get(id)
      if (waiting !== undefined) {
        watchers.delete(id)
        for (const d of waiting) Deferred.doneUnsafe(d, Effect.void)
      }
      const hashes = hashById.get(id)
      if (hashes !== undefined) {
        for (const hash of hashes) entries.delete(hash)
        hashById.delete(id)
      }
    }

    const forgetHash = (id: string, hash: string) => {
      const hashes = hashById.get(id)
      if (hashes === undefined) return
      hashes.delete(hash)
      if (hashes.size === 0) hashById.delete(id)
    }

    const remember = (hash: string, row: CredentialRow, now: number) => {
      if (entries.size >= options.maxEntries) {
        // Maps iterate in insertion order: drop the oldest tenth.
        let drop = Math.ceil(options.maxEntries / 10)
        for (const [h, e] of entries) {
          entries.delete(h)
          forgetHash(e.row.id, h)
          if (--drop === 0) break
        }
      }
      entries.set(hash, {
        row,
        expiresAtMs: row.expiresAt === null ? Number.POSITIVE_INFINITY : Date.parse(row.expiresAt),
        loadedAt: now
      })
      const hashes = hashById.get(row.id) ?? new Set<string>()
      hashes.add(hash)
      hashById.set(row.id, hashes)
    }

    const entryOf = (id: string): Entry | undefined => {
      const hashes = hashById.get(id)
      if (hashes === undefined) return undefined
      for (const hash of hashes) {
        const entry = entries.get(hash)
        if (entry !== undefined) return entry
      }
      return undefined
    }

    const view = (row: CredentialRow): Credential => ({
      id: row.id,
      userId: row.userId,
      name: row.name,
      prefix: row.prefix,
      scopes: row.scopes,
      createdAt: row.createdAt,
      expiresAt: row.expiresAt,
      lastUsedAt: usage.get(row.id)?.lastUsedAt ?? row.lastUsedAt
    })

    // The hot path: a cache hit is one synchronous step (no database, no
    // intermediate effects); only a miss reads the row.
    const authenticate = (kind: "token" | "session") => {
      const secretKind = kind === "token" ? "hld" : "hls"
      const kindPrefix = `${secretKind}_`
      const find = kind === "token" ? repo.findTokenByHash : repo.findSessionByHash
      // OAuth access tokens authenticate on the Agent API as their grant.
      const accessPrefix = "hlo_"
      const what = kind === "token" ? "API token" : "session token"
      const missing = unauthorized(`Missing bearer ${what}: send Authorization: Bearer <token>.`)
      const malformed = unauthorized(`Malformed ${what}.`)
      // The other kind of Herald token, sent to the wrong API: say so, and which kind this API takes.
      const otherPrefix = kind === "token" ? "hls_" : "hld_"
      const wrongKind = unauthorized(kind === "token"
        ? "Wrong kind of token: a session token (hls_…) was sent, and the Agent API takes an API token (hld_…), " +
          "created with POST /api/app/tokens."
        : "Wrong kind of token: an API token (hld_…) was sent, and the Person API takes a session token (hls_…), " +
          "created with `herald admin session create`.")
      const unknown = unauthorized(`Unknown or revoked ${what}.`)
      const expired = unauthorized(`Expired ${what}.`)

      const admit = (entry: Entry, now: number): Effect.Effect<Credential, Unauthorized> => {
        if (entry.expiresAtMs <= now) return Effect.fail(expired)
        const used = usage.get(entry.row.id)
        if (used === undefined) {
          usage.set(entry.row.id, { kind, lastUsedAt: new Date(now).toISOString(), lastUsedMs: now, writtenMs: NEVER })
        } else if (now - used.lastUsedMs >= 1000) {
          // Second resolution is plenty for "last used" and keeps most requests allocation-free.
          used.lastUsedMs = now
          used.lastUsedAt = new Date(now).toISOString()
        }
        return Effect.succeed(view(entry.row))
      }

      return (bearer: string): Effect.Effect<Credential, Unauthorized> => {
        if (bearer === "") return Effect.fail(missing)
        // Tokens and sessions share the cache: the kind's prefix keeps a
        // session from passing as an API token (and back) on a cache hit.
        const access = kind === "token" && bearer.startsWith(accessPrefix)
        if (!access && !bearer.startsWith(kindPrefix)) return Effect.fail(bearer.startsWith(otherPrefix) ? wrongKind : malformed)
        const hash = hashSecret(bearer)
        return Effect.withFiber((fiber) => {
          const now = fiber.getRef(Clock.Clock).currentTimeMillisUnsafe()
          // Only real tokens are cached (by hash), so a hit needs no shape check.
          const cached = entries.get(hash)
          if (cached !== undefined && now - cached.loadedAt < ttlMs) return admit(cached, now)
          if (!isWellFormed(bearer, access ? "hlo" : secretKind)) return Effect.fail(malformed)
          return Effect.flatMap((access ? repo.findAccessTokenByHash : find)(hash), (row) => {
            if (Option.isNone(row) || row.value.revokedAt !== null) return Effect.fail(unknown)
            remember(hash, row.value, now)
            return admit(entries.get(hash)!, now)
          })
        })
      }
    }

    const revokedWhileWaiting = unauthorized("The token was revoked while this request waited.")
    const expiredWhileWaiting = unauthorized("The token expired while this request waited.")
    const unwatch = (id: string, d: Deferred.Deferred<void>) => {
      const waiting = watchers.get(id)
      if (waiting === undefined) return
      waiting.delete(d)
      if (waiting.size === 0) watchers.delete(id)
    }
    // A revocation that lands between authentication and the watch is still
    // caught: the poll re-reads the last five seconds of revocations.
    const ended = (id: string): Effect.Effect<never, Unauthorized> =>
      Effect.acquireUseRelease(
        Effect.sync(() => {
          const d = Deferred.makeUnsafe<void>()
          const waiting = watchers.get(id) ?? new Set()
          waiting.add(d)
          watchers.set(id, waiting)
          return d
        }),
        (d) => {
          const expiresAtMs = entryOf(id)?.expiresAtMs ?? Number.POSITIVE_INFINITY
          const revoked = Effect.andThen(Deferred.await(d), Effect.fail(revokedWhileWaiting))
          if (!Number.isFinite(expiresAtMs)) return revoked
          // Slept on the Clock, so a TestClock drives expiry too.
          const expiry = Effect.flatMap(Clock.currentTimeMillis, (now) =>
            Effect.andThen(Effect.sleep(Duration.millis(Math.max(0, expiresAtMs - now))), Effect.fail(expiredWhileWaiting)))
          return Effect.raceFirst(revoked, expiry)
        },
        (d) => Effect.sync(() => unwatch(id, d))
      )

    // Revocations made anywhere: ask for rows revoked since the newest one seen.
    // The window overlaps by five seconds so a revocation whose transaction
    // committed late is still seen; evicting twice is harmless.
    let watermark = Date.parse(yield* authRepo.databaseNow)
    const pollRevocations = Effect.gen(function*() {
      const since = new Date(watermark - 5000).toISOString()
      const revoked = yield* repo.revokedSince(since)
      for (const r of revoked) {
        evict(r.id)
        watermark = Math.max(watermark, Date.parse(r.revokedAt))
      }
    })

    const flush = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const tokens: Array<{ id: string; lastUsedAt: string }> = []
      const sessions: Array<{ id: string; lastUsedAt: string }> = []
      for (const [id, u] of usage) {
        if (u.lastUsedMs > u.writtenMs && now - u.writtenMs >= writeEveryMs) {
          ;(u.kind === "token" ? tokens : sessions).push({ id, lastUsedAt: u.lastUsedAt })
          u.writtenMs = now
        }
        // Forget usage that is written and idle, so the map stays bounded.
        if (u.lastUsedMs <= u.writtenMs && now - u.lastUsedMs > writeEveryMs * 2) usage.delete(id)
      }
      yield* repo.touchTokens(tokens)
      yield* repo.touchSessions(sessions)
    })
    // Written on shutdown too, so a restart loses no use older than a minute.
    yield* Effect.addFinalizer(() => flush.pipe(Effect.ignore))

    return Credentials.of({
      authenticateToken: authenticate("token"),
      authenticateSession: authenticate("session"),
      describe: (id) => {
        const entry = entryOf(id)
        return entry === undefined ? Option.none() : Option.some(view(entry.row))
      },
      evict,
      ended,
      holding: (id) => watchers.get(id)?.size ?? 0,
      flush: Effect.suspend(() => {
        for (const u of usage.values()) u.writtenMs = NEVER
        return flush
      }),
      pollRevocations: pollRevocations.pipe(Effect.withSpan("Credentials.pollRevocations")),
      flushDue: flush.pipe(Effect.withSpan("Credentials.flushDue")),
      options
    })
  })

  /** Needs `IdentityRepo` and `SqlClient`. */
  static readonly layerWith = (options: CredentialsOptions) =>
    Layer.effect(Credentials, Credentials.make(options)).pipe(Layer.provide(CredentialsRepo.layer))
  static readonly layer = Credentials.layerWith(defaultCredentialsOptions)
}
