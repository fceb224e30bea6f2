/**
 * `Idempotency-Key` (decisions.md): same account + route + key within 24 h —
 * the same body replays the first answer (`replayed`), another body answers
 * 422 `IDEMPOTENCY_KEY_REUSED`, a retry while the first request still runs
 * answers 409 `IDEMPOTENCY_KEY_IN_USE`.
 *
 * The first request claims the key with one INSERT … ON CONFLICT, so of two
 * identical requests at once exactly one runs. A request that fails releases
 * its claim (a retry runs afresh); a claim whose process died is taken over
 * once its lock lapses. Request bodies are compared by the SHA-256 of their
 * canonical JSON (keys sorted), never stored.
 */
import { IdempotencyKeyInUse, IdempotencyKeyReused } from "@herald/api"
import { Context, Duration, Effect, Exit, Layer, Schedule, Schema } from "effect"
import { canonicalSha256 } from "../lib/Canonical.ts"
import { IdempotencyRepo } from "./IdempotencyRepo.ts"
import type { KeyRef } from "./IdempotencyRepo.ts"

/** decisions.md: the replay window. */
export const replayWindow = Duration.hours(24)
/** How long a `running` claim holds before another request may take it over. */
export const runningLock = Duration.minutes(1)

/** SHA-256 (hex) of the canonical JSON of a decoded request body. */
export const requestHash = (body: unknown): string => canonicalSha256(body)

export interface Outcome<A> {
  readonly value: A
  /** True when `value` is the first request's answer, replayed. */
  readonly replayed: boolean
}

export class Idempotency extends Context.Service<Idempotency, {
  /**
   * Runs `effect` once per key: `schema` stores its answer (encoded JSON)
   * and restores it for a replay.
   */
  readonly run: <A, I, E, R>(
    ref: KeyRef & { readonly body: unknown },
    schema: Schema.Codec<A, I>,
    effect: Effect.Effect<A, E, R>
  ) => Effect.Effect<Outcome<A>, E | IdempotencyKeyReused | IdempotencyKeyInUse, R>
  /**
   * An idempotent create (every create route that takes `Idempotency-Key`):
   * without a key `effect` just runs; with one it runs under `run`'s rules and
   * a replayed answer is given as `replay` makes it (the route's `…Replay`).
   */
  readonly create: <A, I, B, E, R>(
    ref: Omit<KeyRef, "key"> & { readonly key: string | undefined; readonly body: unknown },
    schema: Schema.Codec<A, I>,
    effect: Effect.Effect<A, E, R>,
    replay: (value: A) => B
  ) => Effect.Effect<A | B, E | IdempotencyKeyReused | IdempotencyKeyInUse, R>
  /** Deletes keys past the replay window (they are replaced on use anyway): a worker runs it every `purgeEvery`. */
  readonly purge: Effect.Effect<void>
  readonly purgeEvery: Duration.Duration
}>()("herald/Idempotency") {
  static readonly layerNoDeps = Layer.effect(Idempotency, Effect.gen(function*() {
    const repo = yield* IdempotencyRepo
    const window = {
      replaySeconds: Duration.toSeconds(replayWindow),
      lockSeconds: Duration.toSeconds(runningLock)
    }

    const run = <A, I, E, R>(
      ref: KeyRef & { readonly body: unknown },
      schema: Schema.Codec<A, I>,
      effect: Effect.Effect<A, E, R>
    ): Effect.Effect<Outcome<A>, E | IdempotencyKeyReused | IdempotencyKeyInUse, R> =>
      Effect.gen(function*() {
        const key: KeyRef = { userId: ref.userId, route: ref.route, key: ref.key }
        const hash = requestHash(ref.body)
        if (!(yield* repo.claim(key, hash, window))) {
          const row = yield* repo.find(key, window)
          // The row vanished between the two statements (its request failed): run as new.
          if (row === undefined) return yield* run(ref, schema, effect)
          if (row.requestHash !== hash) {
            return yield* new IdempotencyKeyReused({
              error: "This Idempotency-Key was used with a different request body in the last 24 hours."
            })
          }
          if (row.state === "running") {
            return yield* new IdempotencyKeyInUse({
              error: "A request with this Idempotency-Key is still running; retry it shortly."
            })
          }
          const value = yield* Schema.decodeUnknownEffect(schema)(row.response).pipe(Effect.orDie)
          return { value, replayed: true }
        }
        const exit = yield* Effect.exit(effect)
        if (Exit.isFailure(exit)) {
          yield* repo.release(key)
          return yield* Effect.failCause(exit.cause)
        }
        // The work is done: if its answer cannot be stored, a retry after the
        // lock lapses would do it again, so storing it is retried and a final
        // failure is logged loudly.
        const encoded = yield* Schema.encodeUnknownEffect(schema)(exit.value).pipe(Effect.orDie)
        yield* repo.complete(key, encoded).pipe(
          Effect.retry({ times: 5, schedule: Schedule.exponential(Duration.millis(50)) }),
          Effect.catchCause((cause) =>
            Effect.logError(`could not store the answer of Idempotency-Key ${ref.key}; a retry may run it again`, cause)
          )
        )
        return { value: exit.value, replayed: false }
      }).pipe(
        // Once claimed, the request runs to its end even if the caller goes
        // away: an interrupted run would hold the key until its lock lapses.
        Effect.uninterruptible
      )

    // Keys past the window are replaced on use; the purge keeps the table small.
    const create = <A, I, B, E, R>(
      ref: Omit<KeyRef, "key"> & { readonly key: string | undefined; readonly body: unknown },
      schema: Schema.Codec<A, I>,
      effect: Effect.Effect<A, E, R>,
      replay: (value: A) => B
    ): Effect.Effect<A | B, E | IdempotencyKeyReused | IdempotencyKeyInUse, R> =>
      ref.key === undefined
        ? effect
        : Effect.map(run({ ...ref, key: ref.key }, schema, effect), (outcome) => outcome.replayed ? replay(outcome.value) : outcome.value)

    return Idempotency.of({ run, create, purge: Effect.asVoid(repo.purge(window.replaySeconds)), purgeEvery: Duration.hours(1) })
  }))

  static readonly layer = Idempotency.layerNoDeps.pipe(Layer.provide(IdempotencyRepo.layer))
}
