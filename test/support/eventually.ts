/** Waiting for background work (the push worker, a provider's answer) by bounded polling, never a fixed sleep. */
import { Duration, Effect } from "effect"

/** Polls `read` every 50 ms until `check` holds, for at most 10 s. */
export const eventually = <A, E, R>(read: Effect.Effect<A, E, R>, check: (a: A) => boolean) =>
  Effect.gen(function*() {
    for (let i = 0; i < 200; i++) {
      const value = yield* read
      if (check(value)) return value
      yield* Effect.sleep(Duration.millis(50))
    }
    return yield* Effect.die(new Error("condition not reached within 10 s"))
  })
