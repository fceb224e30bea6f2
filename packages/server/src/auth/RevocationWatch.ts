/**
 * How this node learns a credential was revoked, and what it does then: the
 * credential leaves the cache, and every request racing `ended` for it fails.
 *
 * - At once for a revocation made through this node (`revoked`).
 * - Through a poll (a worker runs `poll` every `revocationPollInterval`) that
 *   asks the database for rows revoked since its last look, so a revocation
 *   made on another node (or by the CLI) takes effect here within a second.
 * - A request that outlives its authentication (a long-poll) races `ended`:
 *   it fails with 401 the moment this node learns of the revocation, or when
 *   the credential's `expiresAt` passes.
 */
import { Unauthorized } from "@herald/api"
import { Clock, Context, Deferred, Duration, Effect, Layer } from "effect"
import { CredentialCache } from "./CredentialCache.ts"
import { CredentialsRepo } from "./CredentialsRepo.ts"

const revokedWhileWaiting = new Unauthorized({ error: "The token was revoked while this request waited." })
const expiredWhileWaiting = new Unauthorized({ error: "The token expired while this request waited." })

export class RevocationWatch extends Context.Service<RevocationWatch, {
  /** The credential `id` was revoked: out of the cache, its waiting requests failed. */
  readonly revoked: (id: string) => void
  /** Never succeeds: fails with 401 once this node learns `id` was revoked, or when its `expiresAt` passes. */
  readonly ended: (id: string) => Effect.Effect<never, Unauthorized>
  /** How many requests race `ended` for this credential now. */
  readonly holding: (id: string) => number
  /** One look for revocations made anywhere since the last. */
  readonly poll: Effect.Effect<void>
}>()("herald/RevocationWatch") {
  static readonly layerNoDeps = Layer.effect(RevocationWatch, Effect.gen(function*() {
    const cache = yield* CredentialCache
    const repo = yield* CredentialsRepo
    // Requests racing `ended`, by credential id: completed on revocation.
    const watchers = new Map<string, Set<Deferred.Deferred<void>>>()

    const revoked = (id: string) => {
      const waiting = watchers.get(id)
      if (waiting !== undefined) {
        watchers.delete(id)
        for (const d of waiting) Deferred.doneUnsafe(d, Effect.void)
      }
      cache.evict(id)
    }

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
          const expiresAtMs = cache.entryOf(id)?.expiresAtMs ?? Number.POSITIVE_INFINITY
          const wasRevoked = Effect.andThen(Deferred.await(d), Effect.fail(revokedWhileWaiting))
          if (!Number.isFinite(expiresAtMs)) return wasRevoked
          // Slept on the Clock, so a TestClock drives expiry too.
          const expiry = Effect.flatMap(Clock.currentTimeMillis, (now) =>
            Effect.andThen(Effect.sleep(Duration.millis(Math.max(0, expiresAtMs - now))), Effect.fail(expiredWhileWaiting)))
          return Effect.raceFirst(wasRevoked, expiry)
        },
        (d) => Effect.sync(() => unwatch(id, d))
      )

    // Asks for rows revoked since the newest one seen. The window overlaps by
    // five seconds so a revocation whose transaction committed late is still
    // seen; evicting twice is harmless.
    let watermark = Date.parse(yield* repo.databaseNow)
    const poll = Effect.gen(function*() {
      const since = new Date(watermark - 5000).toISOString()
      for (const r of yield* repo.revokedSince(since)) {
        revoked(r.id)
        watermark = Math.max(watermark, Date.parse(r.revokedAt))
      }
    })

    return RevocationWatch.of({
      revoked,
      ended,
      holding: (id) => watchers.get(id)?.size ?? 0,
      poll: poll.pipe(Effect.withSpan("Credentials.pollRevocations"))
    })
  }))
}
