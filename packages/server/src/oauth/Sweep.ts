/**
 * The OAuth sweep: registration is open to anyone, so clients nobody approved
 * within 24 hours are deleted, with expired codes, access tokens, refresh
 * tokens and spent or expired sign-in links. One pass deletes bounded
 * batches; the worker (runtime/Workers.ts) runs it every few minutes.
 */
import { Context, Effect, Layer } from "effect"
import type { Duration } from "effect"
import { GrantsRepo } from "./GrantsRepo.ts"
import { SWEEP_BATCH, SWEEP_EVERY } from "./Lifetimes.ts"
import { OAuthClients } from "./OAuthClients.ts"

export class OAuthSweep extends Context.Service<OAuthSweep, {
  readonly every: Duration.Input
  /** One pass: how many clients and how many expired rows it deleted. */
  readonly sweep: Effect.Effect<{ readonly clients: number; readonly expired: number }>
}>()("herald/oauth/OAuthSweep") {
  static readonly layerNoDeps = Layer.effect(OAuthSweep, Effect.gen(function*() {
    const clients = yield* OAuthClients
    const grants = yield* GrantsRepo
    const sweep = Effect.gen(function*() {
      const expired = yield* grants.deleteExpired(SWEEP_BATCH)
      const unclaimed = yield* clients.sweepUnclaimed(SWEEP_BATCH)
      if (unclaimed + expired > 0) yield* Effect.logDebug("oauth sweep").pipe(Effect.annotateLogs({ clients: unclaimed, expired }))
      return { clients: unclaimed, expired }
    }).pipe(Effect.withSpan("OAuthSweep.sweep"))
    return OAuthSweep.of({ every: SWEEP_EVERY, sweep })
  }))
}
