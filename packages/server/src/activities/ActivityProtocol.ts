/**
 * The protocol of the live-activity actor: an `effect/cluster` entity keyed
 * by the activity id, its messages and what they answer. Callers import this
 * module to talk to an activity; its behaviour (`toLayer`) is ActivityBehaviour.ts.
 *
 * Every message may be delivered twice (the cluster delivers at least once: a
 * sender retries a request its runner may have run before it became
 * unreachable; the stored expiry comes again after a restart). None changes
 * anything the second time: see each message.
 */
import { ActivityEnded, ActivityPayloadTooLarge, PriorityReason } from "@herald/api"
import { Schema } from "effect"
import { Entity } from "effect/cluster"
import { Rpc } from "effect/rpc"
import { deadlineRpc } from "../cluster/Deadline.ts"

/** What a mutation came to, for its answer. */
export const MutationOutcome = Schema.Struct({
  sequence: Schema.Number,
  apnsPriority: Schema.Literals([5, 10]),
  priorityReason: PriorityReason,
  superseded: Schema.Number,
  accepted: Schema.Number,
  failed: Schema.Number,
  queued: Schema.Number
})
export type MutationOutcome = typeof MutationOutcome.Type

export const LiveActivityEntity = Entity.make("LiveActivity", [
  /** Sends whatever is due now, device by device in order; safe to call any number of times (each operation is claimed before it goes). */
  Rpc.make("Flush"),
  /**
   * Applies `props` (merged into the activity's) at `priority`. `updateId`, one per request, makes a second
   * delivery of the same update answer the first's outcome instead of applying it again (a new sequence, a
   * second push, a milestone spent twice).
   */
  Rpc.make("Update", {
    payload: {
      props: Schema.Record(Schema.String, Schema.Unknown),
      priority: Schema.Literals(["high", "default"]),
      updateId: Schema.optionalKey(Schema.String)
    },
    success: MutationOutcome,
    error: Schema.Union([ActivityEnded, ActivityPayloadTooLarge])
  }),
  /** Ends the activity; again, it answers `ActivityEnded` and queues nothing (the end is a conditional update). */
  Rpc.make("End", { success: MutationOutcome, error: ActivityEnded }),
  /**
   * The activity's expiry (`Deadline.at(expiresAt)`): persisted, delivered at its time across restarts.
   * Again, it finds the activity final and changes nothing.
   */
  deadlineRpc("Expire")
])
