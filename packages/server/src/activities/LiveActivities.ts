/**
 * Live activities as other capabilities use them: a prompt's interactive card
 * (started with the prompt, ended when the prompt ends). Writes join the
 * caller's transaction; `flush` hands the activity to its entity after the
 * commit. A sweep flushes activities whose queued work fell due (a retry's
 * backoff, work left by a restart).
 */
import { ActivityCapacityExceeded } from "@herald/api"
import type { Interaction } from "@herald/api"
import { Clock, Context, Duration, Effect, Layer } from "effect"
import { LiveActivityEntity } from "./ActivityEntity.ts"
import { liveActivityMessage, promptCardState } from "./Cards.ts"
import { ActivitiesRepo, DEVICE_CAPACITY } from "./Repo.ts"

const SWEEP_INTERVAL = Duration.seconds(2)

export class LiveActivities extends Context.Service<LiveActivities, {
  /** Queues the prompt's card on the devices with room (in the caller's transaction); answers how many. */
  readonly startPromptCard: (
    activityId: string,
    interaction: Interaction,
    owner: { readonly userId: string; readonly tokenId: string },
    deviceIds: ReadonlyArray<string>
  ) => Effect.Effect<number, ActivityCapacityExceeded>
  /** Ends the prompt's card, if it has one (in the caller's transaction); answers its id. */
  readonly endPromptCard: (interaction: Interaction) => Effect.Effect<string | undefined>
  /** Sends what is due for the activity (after the commit). */
  readonly flush: (activityId: string) => Effect.Effect<void>
}>()("herald/LiveActivities") {
  static readonly layerNoDeps = Layer.effect(LiveActivities, Effect.gen(function*() {
    const repo = yield* ActivitiesRepo
    const client = yield* LiveActivityEntity.client
    const seconds = Effect.map(Clock.currentTimeMillis, (ms) => Math.floor(ms / 1000))

    const startPromptCard: LiveActivities["Service"]["startPromptCard"] = (activityId, interaction, owner, deviceIds) =>
      Effect.gen(function*() {
        const state = promptCardState(interaction)
        const timestampSeconds = yield* seconds
        const started = yield* repo.startCard(
          {
            id: activityId,
            userId: owner.userId,
            tokenId: owner.tokenId,
            interactionId: interaction.id,
            props: state,
            expiresAt: interaction.expiresAt
          },
          deviceIds,
          () =>
            liveActivityMessage({
              activityId,
              event: "start",
              state,
              priority: 10,
              timestampSeconds,
              alert: { title: interaction.title, body: interaction.prompt },
              staleDate: Math.floor(Date.parse(interaction.expiresAt) / 1000)
            })
        )
        if (started === undefined) {
          return yield* new ActivityCapacityExceeded({
            error: `Every target device already shows ${DEVICE_CAPACITY} live activities.`,
            limit: DEVICE_CAPACITY
          })
        }
        return started.length
      })

    const endPromptCard = (interaction: Interaction) =>
      Effect.gen(function*() {
        const now = yield* seconds
        return yield* repo.endForInteraction(interaction.id, (activityId) =>
          liveActivityMessage({
            activityId,
            event: "end",
            state: promptCardState(interaction),
            priority: 10,
            timestampSeconds: now,
            // The outcome stays readable on the lock screen for a minute.
            dismissalDate: now + 60
          })
        )
      })

    const flush = (activityId: string) =>
      client(activityId).Flush(undefined, { discard: true }).pipe(
        Effect.catchCause((cause) => Effect.logWarning("could not hand a live activity to its entity", cause))
      )

    yield* Effect.forkScoped(
      Effect.gen(function*() {
        while (true) {
          const due = yield* repo.withQueuedWork
          yield* Effect.forEach(due, flush, { discard: true })
          yield* Effect.sleep(SWEEP_INTERVAL)
        }
      }).pipe(
        Effect.catchCause((cause) => Effect.logWarning("live activity sweep failed; retrying", cause)),
        Effect.andThen(Effect.sleep(SWEEP_INTERVAL)),
        Effect.forever
      )
    )

    return LiveActivities.of({ startPromptCard, endPromptCard, flush })
  }))
}
