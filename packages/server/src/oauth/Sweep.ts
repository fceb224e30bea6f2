/**
 * The OAuth sweep: registration is open to anyone, so clients nobody approved
 * are deleted after a short TTL (an hour by default) and approved ones once
 * they have had no grant for 24 hours, with expired codes, access tokens,
 * refresh tokens and spent or expired sign-in links. Each kind is deleted in
 * bounded batches, repeated until a batch comes back short: a pass leaves
 * nothing expired behind however fast rows were made (issue 30: one batch of
 * 1,000 every 10 minutes fell behind a registration flood). The worker
 * (runtime/Workers.ts) runs a pass every few minutes.
 */
import { Context, Effect, Layer } from "effect"
import type { Duration } from "effect"
import { GrantsRepo } from "./GrantsRepo.ts"
import { SWEEP_BATCH, SWEEP_EVERY, SWEEP_MAX_BATCHES } from "./Lifetimes.ts"
import { OAuthClients } from "./OAuthClients.ts"

/**
 * Runs `batch` until it deletes fewer than `SWEEP_BATCH` rows (or `SWEEP_MAX_BATCHES` times); the total.
 * `deleteExpired` deletes up to a batch of each of its kinds, so a total under one batch means every kind came
 * back short.
 */
const untilShort = (batch: (limit: number) => Effect.Effect<number>): Effect.Effect<number> =>
  Effect.gen(function*() {
    let total = 0
    for (let i = 0; i < SWEEP_MAX_BATCHES; i++) {
      const deleted = yield* batch(SWEEP_BATCH)
      total += deleted
      if (deleted < SWEEP_BATCH) break
    }
    return total
  })

export class OAuthSweep extends Context.Service<OAuthSweep, {
  readonly every: Duration.Input
  /** One pass: how many clients and how many expired rows it deleted. */
  readonly sweep: Effect.Effect<{ readonly clients: number; readonly expired: number }>
}>()("herald/OAuthSweep") {
  static readonly layerNoDeps = Layer.effect(OAuthSweep, Effect.gen(function*() {
    const clients = yield* OAuthClients
    const grants = yield* GrantsRepo
    const sweep = Effect.gen(function*() {
      const expired = yield* untilShort(grants.deleteExpired)
      const unclaimed = yield* untilShort(clients.sweepUnclaimed)
      if (unclaimed + expired > 0) yield* Effect.logDebug("oauth sweep").pipe(Effect.annotateLogs({ clients: unclaimed, expired }))
      return { clients: unclaimed, expired }
    }).pipe(Effect.withSpan("OAuthSweep.sweep"))
    return OAuthSweep.of({ every: SWEEP_EVERY, sweep })
  }))
}
