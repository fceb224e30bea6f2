/** Records of on-call: groups with rotations, escalation and overrides, and the pages sent to them. */
import { Schema } from "effect"
import { AppSummary } from "./Apps.ts"
import { FreeObject, Timestamp } from "./Common.ts"

/** OncallPerson: a person as on-call records show them. */
export class OncallPerson extends Schema.Class<OncallPerson>("OncallPerson")({
  userId: Schema.String,
  name: Schema.String,
  image: Schema.NullOr(Schema.String)
}) {}

/** OncallShift: who is on call for a window; `overrideId` is set when an override put them there. */
export class OncallShift extends Schema.Class<OncallShift>("OncallShift")({
  person: OncallPerson,
  startsAt: Timestamp,
  endsAt: Timestamp,
  override: Schema.Boolean,
  overrideId: Schema.optionalKey(Schema.String)
}) {}

/** How often a rotation hands off. */
export const RotationPeriod = Schema.Literals(["daily", "weekly"])
export type RotationPeriod = typeof RotationPeriod.Type

/** An on-call group's rotation: members in order, handing off at `handoffAt` ("HH:MM") in `timezone` (IANA). */
export class OncallRotation extends Schema.Class<OncallRotation>("OncallRotation")({
  members: Schema.Array(OncallPerson),
  period: RotationPeriod,
  handoffAt: Schema.String.check(Schema.isPattern(/^(?:[01]\d|2[0-3]):[0-5]\d$/u)),
  timezone: Schema.String,
  startsAt: Timestamp
}) {}

/** Whom an escalation step pages: the `next` person in the rotation, or the whole `group`. */
export const EscalationTarget = Schema.Literals(["next", "group"])
export type EscalationTarget = typeof EscalationTarget.Type

/** One escalation step: after `afterMinutes` unacknowledged, page `target`. */
export class EscalationStep extends Schema.Class<EscalationStep>("EscalationStep")({
  afterMinutes: Schema.Natural,
  target: EscalationTarget
}) {}

/** An override: someone put on call for a window; id `ovr_…`. */
export class OncallOverride extends Schema.Class<OncallOverride>("OncallOverride")({
  id: Schema.String,
  person: OncallPerson,
  startsAt: Timestamp,
  endsAt: Timestamp
}) {}

/** OncallGroup: an on-call group of a team with its current and upcoming shifts; id `ocg_…`. */
export class OncallGroup extends Schema.Class<OncallGroup>("OncallGroup")({
  id: Schema.String,
  teamId: Schema.String,
  name: Schema.String,
  rotation: OncallRotation,
  escalation: Schema.Array(EscalationStep),
  current: Schema.NullOr(OncallShift),
  upcoming: Schema.Array(OncallShift),
  overrides: Schema.Array(OncallOverride),
  openPageCount: Schema.Natural,
  createdAt: Timestamp,
  updatedAt: Timestamp
}) {}

/** Page status: `triggered`, then `acknowledged` by a human, and `resolved`. */
export const PageStatus = Schema.Literals(["triggered", "acknowledged", "resolved"])
export type PageStatus = typeof PageStatus.Type

/**
 * OncallPage: a page of an on-call group; id `page_…`. The spec requires only `id`, `groupId`,
 * `groupName`, `teamId` and `title`; the other fields it names are optional here as written, and
 * it does not show the fields from `notified` onward, so the entries of `notified` are free-form
 * objects and the record's timestamps are optional.
 */
export class OncallPage extends Schema.Class<OncallPage>("OncallPage")({
  id: Schema.String,
  groupId: Schema.String,
  groupName: Schema.String,
  teamId: Schema.String,
  title: Schema.String,
  body: Schema.optionalKey(Schema.NullOr(Schema.String)),
  url: Schema.optionalKey(Schema.NullOr(Schema.String)),
  app: Schema.optionalKey(Schema.NullOr(AppSummary)),
  status: Schema.optionalKey(PageStatus),
  dedupKey: Schema.optionalKey(Schema.NullOr(Schema.String)),
  repeatCount: Schema.optionalKey(Schema.Natural),
  /** Who has been paged so far (entry fields not fixed by the spec). */
  notified: Schema.optionalKey(Schema.Array(FreeObject)),
  createdAt: Schema.optionalKey(Timestamp),
  updatedAt: Schema.optionalKey(Timestamp),
  acknowledgedAt: Schema.optionalKey(Schema.NullOr(Timestamp)),
  resolvedAt: Schema.optionalKey(Schema.NullOr(Timestamp))
}) {}
