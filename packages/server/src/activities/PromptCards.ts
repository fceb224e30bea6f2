/**
 * A prompt's interactive card (a prompt with `presentation: live_activity`):
 * started with the prompt, in its transaction, on the devices with room
 * (counted against each device's five, like any live activity); ended when
 * the prompt ends (answered, canceled or expired), its outcome left on the
 * lock screen for a minute. Its props are the prompt's (Cards.ts): the
 * activities routes read it but cannot change it.
 */
import type { ActivityCapacityExceeded, Interaction } from "@herald/api"
import { Clock, Effect } from "effect"
import { makeActorCalls } from "./ActorCalls.ts"
import { capacityExceeded } from "./Capacity.ts"
import { liveActivityMessage, promptCardStart, promptCardState } from "./Cards.ts"
import { LifecycleRepo } from "./LifecycleRepo.ts"

/** How long a prompt card's outcome stays readable on the lock screen. */
const OUTCOME_DISMISSAL_SECONDS = 60

export const makePromptCards = Effect.gen(function*() {
  const lifecycle = yield* LifecycleRepo
  const calls = yield* makeActorCalls
  const seconds = Effect.map(Clock.currentTimeMillis, (ms) => Math.floor(ms / 1000))

  /** Queues the card on the devices with room (in the caller's transaction); answers how many. */
  const start = (
    activityId: string,
    interaction: Interaction,
    owner: { readonly userId: string; readonly tokenId: string },
    deviceIds: ReadonlyArray<string>
  ): Effect.Effect<number, ActivityCapacityExceeded> =>
    Effect.gen(function*() {
      const state = promptCardState(activityId, interaction)
      const timestampSeconds = yield* seconds
      const started = yield* lifecycle.start(
        { id: activityId, userId: owner.userId, tokenId: owner.tokenId, key: null, interactionId: interaction.id, props: state, expiresAt: interaction.expiresAt },
        deviceIds,
        "interaction",
        () => promptCardStart(activityId, interaction, state, timestampSeconds)
      )
      if (started._tag === "Full") return yield* capacityExceeded
      return started.started.length
    }).pipe(
      // A prompt card has no key: no start can take it first.
      Effect.catchTag("KeyTaken", Effect.die)
    )

  /** Ends the card, if the prompt has one (in the caller's transaction); answers its id. */
  const end = (interaction: Interaction) =>
    Effect.gen(function*() {
      const now = yield* seconds
      return yield* lifecycle.endForInteraction(interaction.id, (activityId) =>
        liveActivityMessage({
          activityId,
          event: "end",
          state: promptCardState(activityId, interaction),
          priority: 10,
          timestampSeconds: now,
          dismissalDate: now + OUTCOME_DISMISSAL_SECONDS
        }))
    })

  /** After the card's commit: its expiry timer (which also drops what is still queued then), and its first sends. */
  const started = (activityId: string, expiresAt: string) =>
    Effect.andThen(calls.scheduleExpiry(activityId, expiresAt).pipe(Effect.orDie), calls.flush(activityId))

  return { start, end, started, flush: calls.flush }
})
