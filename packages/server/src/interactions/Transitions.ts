/**
 * The one way a prompt leaves `pending`: the status change, its outcome
 * deliveries, feed result and inbox read mark commit in one transaction, so
 * an ended prompt always has its events and a prompt never ends twice.
 * Called by the prompt's entity only, which wakes its waiters afterwards.
 */
import type { Interaction } from "@herald/api"
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { LiveActivities } from "../activities/LiveActivities.ts"
import { Deliveries } from "../webhooks/Deliveries.ts"
import { eventTypeOf } from "../webhooks/Payloads.ts"
import { InteractionsRepo } from "./Repo.ts"
import { CHANNEL, PromptWakeups } from "./Wakeups.ts"
import type { Change } from "./Repo.ts"

export class Transitions extends Context.Service<Transitions, {
  /** The prompt after the change; none when it was no longer pending (another change won). */
  readonly apply: (id: string, change: Change) => Effect.Effect<Interaction | undefined>
}>()("herald/Transitions") {
  static readonly layer = Layer.effect(Transitions, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* InteractionsRepo
    const deliveries = yield* Deliveries
    const activities = yield* LiveActivities
    const wakeups = yield* PromptWakeups

    const apply = Effect.fn("Transitions.apply")(function*(id: string, change: Change) {
      const changed = yield* sql.withTransaction(Effect.gen(function*() {
        const result = yield* repo.transition(id, change)
        if (result === undefined) return undefined
        // Delivered at commit to the other processes, whose waiters of this prompt it wakes.
        yield* sql`SELECT pg_notify(${CHANNEL}, ${wakeups.payload(id)})`
        const queued = yield* deliveries.enqueueOutcome(result.interaction, result.routing, eventTypeOf(result.interaction.status))
        // A prompt shown as a live activity: its card ends with it.
        const card = result.interaction.presentation === "live_activity"
          ? yield* activities.endPromptCard(result.interaction)
          : undefined
        return { interaction: result.interaction, queued, card }
      })).pipe(Effect.orDie)
      if (changed === undefined) return undefined
      if (changed.queued > 0) yield* deliveries.wake
      if (changed.card !== undefined) yield* activities.flush(changed.card)
      return changed.interaction
    })

    return Transitions.of({ apply })
  }))
}
