/**
 * The one way a prompt leaves `pending`: the status change, its outcome
 * deliveries, feed result, inbox read mark and the removal of its alert from
 * the device trays commit in one transaction, so
 * an ended prompt always has its events and a prompt never ends twice.
 * Called by the prompt's entity only, which wakes its waiters afterwards.
 */
import type { Interaction } from "@herald/api"
import { Context, Effect, Layer } from "effect"
import { LiveActivities } from "../activities/LiveActivities.ts"
import { InboxWrites } from "../inbox/InboxWrites.ts"
import { withdrawMessage } from "../push/Alerts.ts"
import { Outbox } from "../push/Outbox.ts"
import { Deliveries } from "../webhooks/Deliveries.ts"
import { eventTypeOf } from "../webhooks/Payloads.ts"
import { InteractionsRepo } from "./InteractionsRepo.ts"
import { PromptWakeups } from "./Wakeups.ts"
import type { Change } from "./InteractionsRepo.ts"

export class Transitions extends Context.Service<Transitions, {
  /** The prompt after the change; none when it was no longer pending (another change won). */
  readonly apply: (id: string, change: Change) => Effect.Effect<Interaction | undefined>
}>()("herald/Transitions") {
  static readonly layer = Layer.effect(Transitions, Effect.gen(function*() {
    const repo = yield* InteractionsRepo
    const deliveries = yield* Deliveries
    const activities = yield* LiveActivities
    const wakeups = yield* PromptWakeups
    const outbox = yield* Outbox
    const inbox = yield* InboxWrites

    /** Queues the removal command for the devices that show the prompt's alert (in the transaction). */
    const retireAlert = (id: string) =>
      Effect.gen(function*() {
        const devices = yield* repo.retireAlerts(id)
        const ids = yield* outbox.toDevices({ devices, origin: "interaction", itemId: id, purpose: "withdraw", message: withdrawMessage(id) })
        return ids.length
      })

    const apply = Effect.fn("Transitions.apply")(function*(id: string, change: Change) {
      const changed = yield* repo.inTransaction(Effect.gen(function*() {
        const result = yield* repo.transition(id, change)
        if (result === undefined) return undefined
        // Delivered at commit to the other processes, whose waiters of this prompt it wakes.
        yield* repo.announce(wakeups.payload(id))
        // And the person's open inbox streams, wherever they are held.
        yield* inbox.changed([{ userId: result.routing.userId, ref: `interaction:${id}` }])
        const queued = yield* deliveries.enqueueOutcome(result.interaction, result.routing, eventTypeOf(result.interaction.status))
        // Its alert leaves every tray (its buttons would only meet a 409); a card ends with it.
        const card = result.interaction.presentation === "live_activity"
          ? yield* activities.endPromptCard(result.interaction)
          : undefined
        const withdrawals = card === undefined ? yield* retireAlert(id) : 0
        return { interaction: result.interaction, queued, card, withdrawals }
      }))
      if (changed === undefined) return undefined
      if (changed.queued > 0) yield* deliveries.wake
      if (changed.card !== undefined) yield* activities.flush(changed.card)
      if (changed.withdrawals > 0) yield* outbox.wake
      return changed.interaction
    })

    return Transitions.of({ apply })
  }))
}
