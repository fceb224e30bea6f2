/**
 * The live-activity actors resident on this node, by activity id. A request
 * whose activity's actor lives here runs the actor's update directly, under
 * the actor's own lock, instead of a trip through the cluster runtime
 * (message, mailbox, handler fiber, reply) for every routine snapshot: that
 * trip was about a third of an update request's CPU (docs/benchmarks.md).
 * An actor registers once built and leaves when it stops (idle, its shard
 * moved, shutdown); an activity whose actor is elsewhere, or not yet built,
 * is called through the cluster as before, which builds it.
 */
import type { ActivityEnded, ActivityPayloadTooLarge } from "@herald/api"
import { Context, Effect, Layer } from "effect"
import type { Scope } from "effect"
import type { MutationOutcome } from "./ActivityProtocol.ts"

/**
 * A direct caller goes through the cluster at least this often: the runtime
 * counts only its own messages as use, and stops an actor idle for 5 minutes
 * (its pacing wake-up with it).
 */
export const REFRESH_MILLIS = 60_000

/** What a resident actor answers directly: the protocol's `Update`, with the same rules and errors. */
export interface ResidentActor {
  /** When it last took a message through the cluster (the actor's clock). */
  readonly messagedAt: () => number
  readonly update: (
    props: Readonly<Record<string, unknown>>,
    priority: "high" | "default"
  ) => Effect.Effect<MutationOutcome, ActivityEnded | ActivityPayloadTooLarge>
}

export class ResidentActivities extends Context.Service<ResidentActivities, {
  readonly get: (activityId: string) => ResidentActor | undefined
  /** Registers the actor for the life of the caller's scope (the actor's). */
  readonly register: (activityId: string, actor: ResidentActor) => Effect.Effect<void, never, Scope.Scope>
}>()("herald/ResidentActivities") {
  static readonly layer = Layer.sync(ResidentActivities, () => {
    const actors = new Map<string, ResidentActor>()
    return ResidentActivities.of({
      get: (activityId) => actors.get(activityId),
      register: (activityId, actor) =>
        Effect.acquireRelease(
          Effect.sync(() => void actors.set(activityId, actor)),
          // A newer actor of the same activity (rebuilt after this one stopped) keeps its place.
          () => Effect.sync(() => void (actors.get(activityId) === actor && actors.delete(activityId)))
        )
    })
  })
}
