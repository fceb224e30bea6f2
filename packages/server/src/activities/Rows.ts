/**
 * The shapes the live-activity repos read and write: the rows they decode
 * (each a Schema, so nothing read from the database is used unchecked) and
 * the writes they take. Shared by the lifecycle, queue and read-model repos
 * and by the actor that drives the queue.
 */
import { PriorityReason } from "@herald/api"
import { Data, Schema } from "effect"
import { StoredPushMessage } from "../push/PushMessage.ts"
import type { PushMessage } from "../push/PushMessage.ts"

export interface NewActivity {
  readonly id: string
  readonly userId: string
  readonly tokenId: string
  readonly key: string | null
  readonly interactionId: string | null
  readonly props: Readonly<Record<string, unknown>>
  readonly expiresAt: string
}

/**
 * An operation's id: one per activity, device and sequence (the update
 * statement builds the same in SQL). A routine snapshot that takes an unsent
 * one's place takes its id and sequence too.
 */
export const operationId = (activityId: string, deviceId: string, seq: number) => `${activityId}_${deviceId}_${seq}`

/** The next operation of one device, with what sending it needs. */
export const QueuedOperation = Schema.Struct({
  id: Schema.String,
  activityId: Schema.String,
  deviceId: Schema.String,
  seq: Schema.Number,
  op: Schema.Literals(["start", "update", "end"]),
  priority: Schema.Literals([5, 10]),
  priorityReason: PriorityReason,
  status: Schema.Literals(["queued", "sending"]),
  payload: StoredPushMessage,
  attempts: Schema.Number,
  due: Schema.Boolean,
  /** How long until a retry's backoff ends (0 when due). */
  dueInMillis: Schema.Number,
  /** The device's unfinished operations, this one included. */
  behind: Schema.Number,
  platform: Schema.Literals(["ios", "android", "web"]),
  pushToken: Schema.String,
  pushToStartToken: Schema.NullOr(Schema.String),
  updateToken: Schema.NullOr(Schema.String),
  environment: Schema.NullOr(Schema.Literals(["sandbox", "production"])),
  /** False once the device can receive nothing (its token refused for good, or the phone changed hands). */
  deviceActive: Schema.Boolean,
  /** A browser's Web Push keys (null for phones). */
  webPushP256dh: Schema.NullOr(Schema.String),
  webPushAuth: Schema.NullOr(Schema.String)
})
export type QueuedOperation = typeof QueuedOperation.Type

/** What one mutation's operations came to. */
export const SeqOutcome = Schema.Struct({ accepted: Schema.Number, failed: Schema.Number, queued: Schema.Number })
export type SeqOutcome = typeof SeqOutcome.Type

export type StartResult =
  | { readonly _tag: "Started"; readonly started: ReadonlyArray<string>; readonly full: ReadonlyArray<string> }
  | { readonly _tag: "Full" }

/** A concurrent start took the key first; the caller's transaction must roll back. */
export class KeyTaken extends Data.TaggedError("KeyTaken") {}

/**
 * A routine update or milestone, written only if the activity is still at
 * `expectedSequence` and live. The activity's new props are the payload's
 * `content-state`.
 */
export interface UpdateWrite {
  readonly activityId: string
  readonly expectedSequence: number
  readonly priority: 5 | 10
  readonly reason: PriorityReason
  readonly grants: ReadonlyArray<number>
  readonly payload: PushMessage
}

/** One activity's answer of the shared update statement. */
export const QueuedUpdateRow = Schema.Struct({
  id: Schema.String,
  sequence: Schema.Number,
  superseded: Schema.Number,
  deviceIds: Schema.Array(Schema.String),
  operationIds: Schema.Array(Schema.String)
})

export interface QueuedUpdate {
  readonly sequence: number
  readonly superseded: number
  /** The devices the update was queued for. */
  readonly deviceIds: ReadonlyArray<string>
  /** Each one's operation (in the order of `deviceIds`): new, or the unsent snapshot it took the place of. */
  readonly operationIds: ReadonlyArray<string>
}

/** An activity's end push, from its last props. */
export type EndMessage = (activityId: string, props: Readonly<Record<string, unknown>>) => PushMessage

const Props = Schema.Record(Schema.String, Schema.Unknown)

/** The activity's row as its actor reads it before a mutation (`milestone_grants` is bigint[]: the driver may answer strings or bigints). */
export const HeadRow = Schema.Struct({
  id: Schema.String,
  status: Schema.String,
  props: Props,
  sequence: Schema.Number,
  milestoneGrants: Schema.Array(Schema.Union([Schema.String, Schema.Number, Schema.BigInt])),
  expiresAt: Schema.String
})

export interface ActivityHead {
  readonly id: string
  readonly status: string
  readonly props: Readonly<Record<string, unknown>>
  readonly sequence: number
  readonly milestoneGrants: ReadonlyArray<number>
  readonly expiresAt: string
}

/** An activity that just ended or expired: what its feed entry and its end push are made of. */
export const ClosedRow = Schema.Struct({
  id: Schema.String,
  userId: Schema.String,
  interactionId: Schema.NullOr(Schema.String),
  sequence: Schema.Number,
  props: Props
})
export type ClosedRow = typeof ClosedRow.Type
