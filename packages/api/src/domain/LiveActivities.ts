/** Records of live activities: task progress cards on phones. */
import { Schema } from "effect"
import { openStruct, Timestamp } from "./Common.ts"
import { PushPriority } from "./Identity.ts"

/** The layouts a live activity can take (selected by `props.layout`). */
export const LiveActivityLayout = Schema.Literals(["standard", "ring", "hero", "terminal", "steps"])
export type LiveActivityLayout = typeof LiveActivityLayout.Type

/**
 * The props of a live activity: "title, optional subtitle, status, detail, progress and further
 * fields". Keys beyond the named ones are kept as they came (the spec leaves the list open), so
 * an app newer than this server still gets them.
 */
export class LiveActivityProps extends Schema.Class<LiveActivityProps>("LiveActivityProps")(openStruct({
  title: Schema.String,
  subtitle: Schema.optionalKey(Schema.String),
  status: Schema.optionalKey(Schema.String),
  detail: Schema.optionalKey(Schema.String),
  /** Completion from 0 to 1. */
  progress: Schema.optionalKey(Schema.Finite.check(Schema.isBetween({ minimum: 0, maximum: 1 }))),
  layout: Schema.optionalKey(LiveActivityLayout),
  /** The items of the `steps` layout; their shape is not fixed by the spec. */
  steps: Schema.optionalKey(Schema.Array(Schema.Unknown)),
  accent: Schema.optionalKey(Schema.String),
  icon: Schema.optionalKey(Schema.String)
})) {
  readonly [key: string]: unknown
}

/** LiveActivity `status`. */
export const LiveActivityStatus = Schema.Literals(["starting", "active", "partial", "failed", "ended", "expired"])
export type LiveActivityStatus = typeof LiveActivityStatus.Type

/** A readiness warning: an iOS update token is late, so updates wait in the queue. */
export const ReadinessWarning = Schema.Literals(["update_token_delayed"])
export type ReadinessWarning = typeof ReadinessWarning.Type

/** LiveActivity `readiness`: how far the devices are from showing the latest state. */
export class LiveActivityReadiness extends Schema.Class<LiveActivityReadiness>("LiveActivityReadiness")({
  ready: Schema.Natural,
  queuedStarts: Schema.Natural,
  awaitingUpdateToken: Schema.Natural,
  warnings: Schema.Array(ReadinessWarning),
  nextStartAt: Schema.NullOr(Timestamp)
}) {}

/** LiveActivity: a task progress card on the account's phones; id `act_…`. */
export class LiveActivity extends Schema.Class<LiveActivity>("LiveActivity")({
  id: Schema.String,
  /** The caller-chosen logical name. */
  key: Schema.NullOr(Schema.String),
  props: LiveActivityProps,
  status: LiveActivityStatus,
  sequence: Schema.Natural,
  accepted: Schema.Natural,
  failed: Schema.Natural,
  expiresAt: Timestamp,
  createdAt: Timestamp,
  updatedAt: Timestamp,
  endedAt: Schema.NullOr(Timestamp),
  readiness: LiveActivityReadiness
}) {}

/** Why a mutation got its iOS priority. */
export const PriorityReason = Schema.Literals(["routine", "milestone", "budget_exhausted", "start", "end", "interaction"])
export type PriorityReason = typeof PriorityReason.Type

/** A text field longer than its layout's suggested visible-character budget (never truncated). */
export class BudgetWarning extends Schema.Class<BudgetWarning>("BudgetWarning")({
  field: Schema.String,
  /** The layout, or `compact` for the compact presentation. */
  layout: Schema.String,
  length: Schema.Natural,
  budget: Schema.Natural
}) {}

/** LiveActivityMutation: the answer of starting, updating or ending a live activity. */
export class LiveActivityMutation extends Schema.Class<LiveActivityMutation>("LiveActivityMutation")({
  activity: LiveActivity,
  accepted: Schema.Natural,
  failed: Schema.Natural,
  /** iOS push transport priority selected; queued work is not yet sent; Android delivery unchanged. */
  apnsPriority: Schema.optionalKey(PushPriority),
  priorityReason: Schema.optionalKey(PriorityReason),
  /** Durably queued device operations awaiting a paced start, an iOS update token or a provider retry. */
  queued: Schema.optionalKey(Schema.Natural),
  /** Unsent routine progress replaced by a newer queued snapshot, never counted as accepted. */
  superseded: Schema.optionalKey(Schema.Natural),
  replaced: Schema.optionalKey(Schema.Natural),
  idempotent: Schema.optionalKey(Schema.Boolean),
  message: Schema.optionalKey(Schema.String),
  /** Text fields over their layout's suggested visible-character budget (Limits); the text is kept whole. */
  budgetWarnings: Schema.optionalKey(Schema.Array(BudgetWarning))
}) {}

/** A replayed start (same `Idempotency-Key`, same body): status 200 with `idempotent: true`. */
export class LiveActivityReplay extends LiveActivityMutation.extend<LiveActivityReplay>("LiveActivityReplay")({
  idempotent: Schema.optionalKey(Schema.Literal(true))
}) {}
