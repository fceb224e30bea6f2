/** Records of one-shot pushes ("send one-shot pushes to the account's devices"). */
import { Schema } from "effect"
import { AlertPriority, BodyFormat, Timestamp } from "./Common.ts"

/** AgentNotification: a one-shot push an agent sent; id `anot_…`. */
export class AgentNotification extends Schema.Class<AgentNotification>("AgentNotification")({
  id: Schema.String,
  title: Schema.String,
  body: Schema.String,
  imageUrl: Schema.NullOr(Schema.String),
  url: Schema.NullOr(Schema.String),
  createdAt: Timestamp,
  projectId: Schema.optionalKey(Schema.NullOr(Schema.String)),
  summary: Schema.optionalKey(Schema.NullOr(Schema.String)),
  bodyFormat: Schema.optionalKey(BodyFormat),
  appId: Schema.optionalKey(Schema.String),
  /** The push's priority as sent (absent when the caller set none: `normal`). */
  priority: Schema.optionalKey(AlertPriority)
}) {}

/** AgentNotificationCreated: the push and how many devices' providers accepted it. */
export class AgentNotificationCreated extends Schema.Class<AgentNotificationCreated>("AgentNotificationCreated")({
  notification: AgentNotification,
  accepted: Schema.Natural,
  /** True when an `Idempotency-Key` replayed the first response. */
  idempotent: Schema.optionalKey(Schema.Boolean),
  message: Schema.optionalKey(Schema.String)
}) {}

/**
 * The first answer of an `Idempotency-Key`, replayed (HTTP 200, `idempotent: true`). A class of its own
 * so the server answers it with 200 where a new notification answers 201.
 */
export class AgentNotificationReplay extends AgentNotificationCreated.extend<AgentNotificationReplay>("AgentNotificationReplay")({
  idempotent: Schema.optionalKey(Schema.Literal(true))
}) {}

/** Withdraw result: `withdrawn` when every device that had accepted the push accepted the removal. */
export const WithdrawStatus = Schema.Literals(["withdrawn", "withdraw_partial"])
export type WithdrawStatus = typeof WithdrawStatus.Type

/** AgentNotificationWithdrawn: the answer of withdrawing a push from the device tray. */
export class AgentNotificationWithdrawn extends Schema.Class<AgentNotificationWithdrawn>("AgentNotificationWithdrawn")({
  ok: Schema.Literal(true),
  notificationId: Schema.String,
  status: WithdrawStatus,
  accepted: Schema.Natural
}) {}
