/**
 * The sign-in sweep: WebAuthn challenges nobody answered in time and e-mail
 * windows that have closed are deleted in bounded batches, repeated until a
 * batch comes back short (anyone may start a ceremony, so a flood must not
 * outrun the sweep). The worker (runtime/Workers.ts) runs a pass every few
 * minutes; spent sign-in links are the OAuth sweep's (oauth/Sweep.ts).
 */
import { Context, Duration, Effect, Layer } from "effect"
import { EMAIL_WINDOW_SECONDS } from "./EmailSignIn.ts"
import { SignInRepo } from "./SignInRepo.ts"

const BATCH = 1000
const MAX_BATCHES = 100

export class SignInSweep extends Context.Service<SignInSweep, {
  readonly every: Duration.Duration
  /** One pass: how many rows it deleted. */
  readonly sweep: Effect.Effect<number>
}>()("herald/SignInSweep") {
  static readonly layerNoDeps = Layer.effect(SignInSweep, Effect.gen(function*() {
    const repo = yield* SignInRepo
    const sweep = Effect.gen(function*() {
      let total = 0
      for (let i = 0; i < MAX_BATCHES; i++) {
        const deleted = yield* repo.deleteExpired(EMAIL_WINDOW_SECONDS, BATCH)
        total += deleted
        if (deleted < BATCH) break
      }
      if (total > 0) yield* Effect.logDebug("sign-in sweep").pipe(Effect.annotateLogs({ deleted: total }))
      return total
    }).pipe(Effect.withSpan("SignInSweep.sweep"))
    return SignInSweep.of({ every: Duration.minutes(5), sweep })
  }))
}
