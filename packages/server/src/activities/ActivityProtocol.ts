/**
 * The protocol of the live-activity actor: an `effect/cluster` entity keyed
 * by the activity id, its messages and what they answer. Callers import this
 * module to talk to an activity; its behaviour (`toLayer`) is ActivityBehaviour.ts.
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
  /** Sends whatever is due now, device by device in order; safe to call any number of times. */
  Rpc.make("Flush"),
  Rpc.make("Update", {
    payload: { props: Schema.Record(Schema.String, Schema.Unknown), priority: Schema.Literals(["high", "default"]) },
    success: MutationOutcome,
    error: Schema.Union([ActivityEnded, ActivityPayloadTooLarge])
  }),
  Rpc.make("End", { success: MutationOutcome, error: ActivityEnded }),
  /** The activity's expiry (`Deadline.at(expiresAt)`): persisted, delivered at its time across restarts. */
  deadlineRpc("Expire")
])
