/** Records of prompts: questions to a person (approval, yes/no or free reply) and their outcome. */
import { Schema } from "effect"
import { Timestamp } from "./Common.ts"

/** Interaction `kind`. */
export const InteractionKind = Schema.Literals(["approval", "yes_no", "reply"])
export type InteractionKind = typeof InteractionKind.Type

/** Interaction `presentation`: a notification, or an interactive live activity. */
export const Presentation = Schema.Literals(["notification", "live_activity"])
export type Presentation = typeof Presentation.Type

/**
 * Interaction `status`: `pending`, then one answer fitting the kind (approval: approved|denied;
 * yes_no: yes|no; reply: replied), or `canceled`/`expired`.
 */
export const InteractionStatus = Schema.Literals(["pending", "approved", "denied", "yes", "no", "replied", "canceled", "expired"])
export type InteractionStatus = typeof InteractionStatus.Type

/** Bounds of a prompt's reminders (`remind`) and of a person's default (docs/limits.md). */
export const REMIND_EVERY_MIN_SECONDS = 60
export const REMIND_EVERY_MAX_SECONDS = 86_400
export const REMIND_TIMES_MAX = 10

/**
 * ReminderSchedule: while a prompt is pending its alert is pushed again every `everySeconds` (60–86400), at most
 * `times` (1–10) times, never at or after its expiry.
 */
export const ReminderSchedule = Schema.Struct({
  everySeconds: Schema.Int.check(Schema.isBetween({ minimum: REMIND_EVERY_MIN_SECONDS, maximum: REMIND_EVERY_MAX_SECONDS })),
  times: Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: REMIND_TIMES_MAX }))
}).annotate({ identifier: "ReminderSchedule" })
export type ReminderSchedule = typeof ReminderSchedule.Type

/** Interaction: a prompt, "a question of a person", and its outcome; id `int_…`. */
export class Interaction extends Schema.Class<Interaction>("Interaction")({
  id: Schema.String,
  title: Schema.String,
  prompt: Schema.String,
  kind: InteractionKind,
  presentation: Presentation,
  status: InteractionStatus,
  choices: Schema.Array(Schema.String),
  response: Schema.NullOr(Schema.String),
  imageUrl: Schema.NullOr(Schema.String),
  url: Schema.NullOr(Schema.String),
  /** Lowercase hex SHA-256 of the canonical JSON of `{kind, title, prompt, choices}`. */
  actionDigest: Schema.String,
  primaryLabel: Schema.NullOr(Schema.String),
  secondaryLabel: Schema.NullOr(Schema.String),
  accepted: Schema.Natural,
  respondingDeviceId: Schema.NullOr(Schema.String),
  respondingUserId: Schema.NullOr(Schema.String),
  expiresAt: Timestamp,
  createdAt: Timestamp,
  respondedAt: Schema.NullOr(Timestamp),
  canceledAt: Schema.NullOr(Timestamp),
  /** The answer given at expiry when nobody answered (a status, or a reply's text); null: the prompt just expires. */
  defaultOnTimeout: Schema.NullOr(Schema.String),
  /** True when the outcome is `defaultOnTimeout`, given at expiry rather than by a person; false otherwise. */
  timedOut: Schema.Boolean,
  /** The reminders of this prompt (its `remind`, else the person's default); null: none. */
  remind: Schema.NullOr(ReminderSchedule),
  /** Reminder pushes queued so far. */
  remindersSent: Schema.Natural,
  /** Breaks through the person's quiet hours (created with `urgent: true`). */
  urgent: Schema.Boolean
}) {}

/** InboxInteraction: a pending prompt from any source, as `GET /interactions` lists it. */
export class InboxInteraction extends Interaction.extend<InboxInteraction>("InboxInteraction")({
  sourceName: Schema.String,
  sourceImageUrl: Schema.NullOr(Schema.String),
  projectId: Schema.optionalKey(Schema.NullOr(Schema.String))
}) {}

/** InteractionCreated: the answer of asking a question. */
export class InteractionCreated extends Schema.Class<InteractionCreated>("InteractionCreated")({
  interaction: Interaction,
  accepted: Schema.Natural,
  idempotent: Schema.optionalKey(Schema.Boolean),
  liveActivityId: Schema.optionalKey(Schema.String),
  /** "durably queued device attempts, not provider acceptance or device receipt". */
  queued: Schema.optionalKey(Schema.Natural),
  message: Schema.optionalKey(Schema.String)
}) {}

/** A replayed create (same `Idempotency-Key`, same body): status 200 with `idempotent: true`. */
export class InteractionReplay extends InteractionCreated.extend<InteractionReplay>("InteractionReplay")({
  idempotent: Schema.optionalKey(Schema.Literal(true))
}) {}

/** The statuses an answer may set; which of them fits depends on the prompt's kind. */
export const AnswerStatus = Schema.Literals(["approved", "denied", "yes", "no", "replied"])
export type AnswerStatus = typeof AnswerStatus.Type
