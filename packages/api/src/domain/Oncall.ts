/** Records of on-call: groups with rotations, escalation and overrides, and the pages sent to them. */
import { Schema } from "effect"
import { AppSummary } from "./Apps.ts"
import { Timestamp } from "./Common.ts"

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

/** One person paged by a page: who, when, and at which escalation step (0: the on-call person at creation). */
export class PageNotified extends Schema.Class<PageNotified>("PageNotified")({
  userId: Schema.String,
  name: Schema.String,
  at: Timestamp,
  step: Schema.Natural
}) {}

/**
 * OncallPage: a page of an on-call group; id `page_…`. `groupId` is null once the group is deleted
 * (`groupName` keeps its name). `notified` lists everyone paged so far, in the order they were paged.
 */
export class OncallPage extends Schema.Class<OncallPage>("OncallPage")({
  id: Schema.String,
  groupId: Schema.NullOr(Schema.String),
  groupName: Schema.String,
  teamId: Schema.String,
  title: Schema.String,
  body: Schema.NullOr(Schema.String),
  url: Schema.NullOr(Schema.String),
  app: Schema.NullOr(AppSummary),
  status: PageStatus,
  dedupKey: Schema.NullOr(Schema.String),
  repeatCount: Schema.Natural,
  notified: Schema.Array(PageNotified),
  /** How many escalation steps have run (0: only the on-call person was paged). */
  step: Schema.Natural,
  createdAt: Timestamp,
  updatedAt: Timestamp,
  acknowledgedAt: Schema.NullOr(Timestamp),
  acknowledgedBy: Schema.NullOr(Schema.String),
  resolvedAt: Schema.NullOr(Timestamp),
  resolvedBy: Schema.NullOr(Schema.String)
}) {}

/** 201: a new page was created and the on-call person paged. */
export class PageCreated extends Schema.Class<PageCreated>("PageCreated")({
  page: OncallPage,
  deduplicated: Schema.Literal(false)
}) {}

/** 200: an open page with the same dedup key absorbed the request (`repeatCount` + 1, nothing pushed). */
export class PageDeduplicated extends Schema.Class<PageDeduplicated>("PageDeduplicated")({
  page: OncallPage,
  deduplicated: Schema.Literal(true)
}) {}

/** 200: the first answer to this `Idempotency-Key`, replayed. */
export class PageReplay extends Schema.Class<PageReplay>("PageReplay")({
  page: OncallPage,
  deduplicated: Schema.Boolean,
  idempotent: Schema.Literal(true)
}) {}

/** The stored answer of a page creation (either kind), for idempotent replay. */
export const PageOutcome = Schema.Union([PageCreated, PageDeduplicated])
export type PageOutcome = typeof PageOutcome.Type

/** OncallPageList: a team's pages, newest first, with the cursor of the next page of results. */
export class OncallPageList extends Schema.Class<OncallPageList>("OncallPageList")({
  items: Schema.Array(OncallPage),
  nextCursor: Schema.NullOr(Schema.String)
}) {}
