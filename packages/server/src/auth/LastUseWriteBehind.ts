/**
 * A credential's `lastUsedAt`, kept in memory on every use (to the second)
 * and written back at most once per credential per `writeEvery`: a worker
 * runs `flushDue` every `flushInterval`, and the layer's finalizer writes
 * what is pending, so a restart loses no use older than that.
 */
import { Clock, Context, Duration, Effect, Layer } from "effect"
import { CredentialsRepo } from "./CredentialsRepo.ts"
import type { Use } from "./CredentialsRepo.ts"

export interface LastUseOptions {
  readonly flushInterval: Duration.Input
  /** Minimum time between two `last_used_at` writes of one credential. */
  readonly writeEvery: Duration.Input
}

interface Usage {
  readonly kind: "token" | "session"
  lastUsedAt: string
  lastUsedMs: number
  writtenMs: number
}

/** `writtenMs` of a use not yet written: earlier than any clock reading. */
const NEVER = Number.NEGATIVE_INFINITY

export class LastUseWriteBehind extends Context.Service<LastUseWriteBehind, {
  /** The credential `id` (a token or a session) was used at `now`. */
  readonly used: (id: string, kind: "token" | "session", now: number) => void
  /** The freshest use this node knows of and has not forgotten. */
  readonly lastUsedAt: (id: string) => string | undefined
  /** Writes the uses that are due. */
  readonly flushDue: Effect.Effect<void>
  /** Writes every pending use now (shutdown, tests). */
  readonly flushAll: Effect.Effect<void>
}>()("herald/LastUseWriteBehind") {
  static readonly layerNoDepsWith = (options: LastUseOptions) =>
    Layer.effect(LastUseWriteBehind, Effect.gen(function*() {
      const repo = yield* CredentialsRepo
      const usage = new Map<string, Usage>()
      const writeEveryMs = Duration.toMillis(Duration.fromInputUnsafe(options.writeEvery))

      const used = (id: string, kind: "token" | "session", now: number) => {
        const u = usage.get(id)
        if (u === undefined) {
          usage.set(id, { kind, lastUsedAt: new Date(now).toISOString(), lastUsedMs: now, writtenMs: NEVER })
        } else if (now - u.lastUsedMs >= 1000) {
          // Second resolution is plenty for "last used" and keeps most requests allocation-free.
          u.lastUsedMs = now
          u.lastUsedAt = new Date(now).toISOString()
        }
      }

      const flush = Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const tokens: Array<Use> = []
        const sessions: Array<Use> = []
        for (const [id, u] of usage) {
          if (u.lastUsedMs > u.writtenMs && now - u.writtenMs >= writeEveryMs) {
            ;(u.kind === "token" ? tokens : sessions).push({ id, lastUsedAt: u.lastUsedAt })
            u.writtenMs = now
          }
          // Forget usage that is written and idle, so the map stays bounded.
          if (u.lastUsedMs <= u.writtenMs && now - u.lastUsedMs > writeEveryMs * 2) usage.delete(id)
        }
        yield* repo.touch("token", tokens)
        yield* repo.touch("session", sessions)
      })
      const flushAll = Effect.suspend(() => {
        for (const u of usage.values()) u.writtenMs = NEVER
        return flush
      })
      yield* Effect.addFinalizer(() => flush.pipe(Effect.ignore))

      return LastUseWriteBehind.of({
        used,
        lastUsedAt: (id) => usage.get(id)?.lastUsedAt,
        flushDue: flush.pipe(Effect.withSpan("Credentials.flushDue")),
        flushAll
      })
    }))
}
