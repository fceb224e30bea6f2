/**
 * The calls the capability makes to activity actors without a caller waiting
 * on their answer: storing an activity's expiry timer, and handing it its
 * queued work. A request that waits on an actor calls through
 * `cluster/EntityCalls.ts` instead.
 */
import { Effect } from "effect"
import { Deadline } from "../cluster/Deadline.ts"
import { LiveActivityEntity } from "./ActivityProtocol.ts"

export const makeActorCalls = Effect.gen(function*() {
  const client = yield* LiveActivityEntity.client

  /** Stores the activity's expiry (persisted; the same deadline sent again is a no-op). */
  const scheduleExpiry = (activityId: string, expiresAt: string) =>
    client(activityId).Expire(Deadline.at(expiresAt), { discard: true })

  /** Has the actor send what is due, not waiting for it; a failure is logged (the sweep comes back to it). */
  const flush = (activityId: string) =>
    client(activityId).Flush(undefined, { discard: true }).pipe(
      Effect.catchCause((cause) => Effect.logWarning("could not hand a live activity to its entity", cause))
    )

  return { client, scheduleExpiry, flush }
})
