/**
 * On-call groups of a team or family, their rotations, escalation steps and
 * overrides (spec "On-call"; bodies and scopes from decisions.md). Pages of a
 * group are in `Pages.ts`.
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { Ok, Timestamp } from "../domain/Common.ts"
import { EscalationTarget, OncallGroup, OncallOverride, OncallPage, OncallShift, RotationPeriod } from "../domain/Oncall.ts"
import { Forbidden, LimitReached, NotFound, ValidationFailed } from "../errors.ts"
import { agentOperation } from "../Operation.ts"
import { OncallGroupId, TeamId, UserId } from "../Params.ts"
import { AgentAuth } from "../Security.ts"

/** People one rotation lists at most (a longer `members` is 400 `VALIDATION_FAILED`). */
export const ONCALL_MAX_ROTATION_MEMBERS = 50
/** Escalation steps one group has at most (400 `VALIDATION_FAILED` beyond it). */
export const ONCALL_MAX_ESCALATION_STEPS = 10
/** The largest `afterMinutes` of an escalation step: one day. */
export const ONCALL_MAX_ESCALATION_MINUTES = 1440
/** On-call groups one team or family keeps at most (422 `LIMIT_REACHED` beyond it). */
export const ONCALL_MAX_GROUPS = 50
/** Current and future overrides one group keeps at most (422 `LIMIT_REACHED` beyond it). */
export const ONCALL_MAX_OVERRIDES = 200
/** The longest window of one override, in days. */
export const ONCALL_MAX_OVERRIDE_DAYS = 90

const GroupName = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(100))

/** A rotation as a request gives it: member user ids in turn order. */
export const RotationInput = Schema.Struct({
  members: Schema.Array(UserId).check(Schema.isMinLength(1), Schema.isMaxLength(ONCALL_MAX_ROTATION_MEMBERS)),
  period: RotationPeriod,
  handoffAt: Schema.String.check(Schema.isPattern(/^(?:[01]\d|2[0-3]):[0-5]\d$/u)).annotate({
    description: "Local wall-clock time of the hand-off, `HH:MM` (24-hour)."
  }),
  timezone: Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(64)).annotate({
    description: "An IANA time-zone name such as `Europe/Berlin`."
  }),
  startsAt: Timestamp
}).annotate({ identifier: "RotationInput" })
export type RotationInput = typeof RotationInput.Type

export const EscalationStepInput = Schema.Struct({
  afterMinutes: Schema.Int.check(Schema.isGreaterThanOrEqualTo(1), Schema.isLessThanOrEqualTo(ONCALL_MAX_ESCALATION_MINUTES)),
  target: EscalationTarget
}).annotate({ identifier: "EscalationStepInput" })

const Escalation = Schema.Array(EscalationStepInput).check(Schema.isMaxLength(ONCALL_MAX_ESCALATION_STEPS))

/** Body of POST /teams/{id}/oncall. */
export const CreateOncallGroupRequest = Schema.Struct({
  name: GroupName,
  rotation: RotationInput,
  escalation: Schema.optionalKey(Escalation)
}).annotate({ identifier: "CreateOncallGroupRequest" })
export type CreateOncallGroupRequest = typeof CreateOncallGroupRequest.Type

/** Body of PATCH /oncall/{groupId}: a field given replaces it whole; an absent one is kept. */
export const UpdateOncallGroupRequest = Schema.Struct({
  name: Schema.optionalKey(GroupName),
  rotation: Schema.optionalKey(RotationInput),
  escalation: Schema.optionalKey(Escalation)
}).annotate({ identifier: "UpdateOncallGroupRequest" })
export type UpdateOncallGroupRequest = typeof UpdateOncallGroupRequest.Type

/** Body of POST /oncall/{groupId}/overrides. */
export const CreateOverrideRequest = Schema.Struct({
  userId: UserId,
  startsAt: Timestamp,
  endsAt: Timestamp
}).annotate({ identifier: "CreateOverrideRequest" })
export type CreateOverrideRequest = typeof CreateOverrideRequest.Type

export class OncallGroupList extends Schema.Class<OncallGroupList>("OncallGroupList")({
  items: Schema.Array(OncallGroup)
}) {}

/** The group a shift of GET /oncall/me belongs to. */
export class OncallGroupRef extends Schema.Class<OncallGroupRef>("OncallGroupRef")({
  id: Schema.String,
  name: Schema.String,
  teamId: Schema.String
}) {}

export class OncallMyShift extends Schema.Class<OncallMyShift>("OncallMyShift")({
  group: OncallGroupRef,
  shift: OncallShift
}) {}

/** GET /oncall/me: the caller's shifts (soonest first) and the open pages that notified them (newest first). */
export class OncallMe extends Schema.Class<OncallMe>("OncallMe")({
  shifts: Schema.Array(OncallMyShift),
  pages: Schema.Array(OncallPage)
}) {}

export const OverrideId = Schema.String.check(Schema.isPattern(/^ovr_[0-9A-Za-z]{1,64}$/)).annotate({
  identifier: "OverrideId",
  description: "An id starting `ovr_`."
})

const concealment = "A caller who is not a member of the group's team gets 404, as for a group that does not exist."
const adminOnly = "Admins and the owner only (a member: 403 `FORBIDDEN`). " + concealment
const shifts = "`current` is the shift covering now (null when nobody is on call) and `upcoming` the next 5 shifts: " +
  "members take turns in list order, one `period` each, handing off at `handoffAt` local time in `timezone` " +
  "(a DST day still hands off at the same wall-clock time), counting from `startsAt`; an override wins for its " +
  "window. `overrides` lists the current and future ones, soonest first; `openPageCount` counts the group's pages " +
  "not yet resolved."
const groupRules = "Every `rotation.members` entry must be a member of the team (else 404 `Member not found.`); a " +
  `rotation lists 1-${ONCALL_MAX_ROTATION_MEMBERS} distinct people in turn order. \`timezone\` must be an IANA zone ` +
  "name (else 400 `VALIDATION_FAILED`). `escalation` lists at most " +
  `${ONCALL_MAX_ESCALATION_STEPS} steps with \`afterMinutes\` 1-${ONCALL_MAX_ESCALATION_MINUTES}, strictly ` +
  "ascending (counted from the page's creation; else 400 `VALIDATION_FAILED`). `name` 1-100 characters. " +
  "A person leaving the team drops out of its rotations and overrides."

export class OncallGroupsGroup extends HttpApiGroup.make("oncall")
  .add(
    HttpApiEndpoint.get("list", "/teams/:id/oncall", { params: { id: TeamId }, success: OncallGroupList, error: NotFound })
      .pipe(agentOperation({
        summary: "List a team's on-call groups",
        description: "The team's on-call groups, newest first, each with its current and upcoming shifts. Any member " +
          "may read. " + shifts + " " + concealment,
        scopes: ["oncall:read"]
      })),
    HttpApiEndpoint.post("create", "/teams/:id/oncall", {
      params: { id: TeamId },
      payload: CreateOncallGroupRequest,
      success: OncallGroup.pipe(HttpApiSchema.status(201)),
      error: [NotFound, Forbidden, LimitReached, ValidationFailed]
    }).pipe(agentOperation({
      summary: "Create an on-call group",
      description: "Creates an on-call group with its rotation and escalation steps (none when `escalation` is " +
        "absent). " + adminOnly + " " + groupRules + ` A team keeps at most ${ONCALL_MAX_GROUPS} on-call groups (422 ` +
        "`LIMIT_REACHED` with `limit`). Written to the team's audit log (`oncall.group_created`).",
      scopes: ["oncall:write"]
    })),
    HttpApiEndpoint.get("me", "/oncall/me", { success: OncallMe })
      .pipe(agentOperation({
        summary: "My on-call shifts and pages",
        description: "The caller's shifts in every on-call group of their teams and families, soonest first (the one " +
          "covering now included; at most 5 per group, overrides counted), and the open pages that notified the " +
          "caller, newest first.",
        scopes: ["oncall:read"]
      })),
    HttpApiEndpoint.get("get", "/oncall/:groupId", { params: { groupId: OncallGroupId }, success: OncallGroup, error: NotFound })
      .pipe(agentOperation({
        summary: "Get an on-call group",
        description: "One OncallGroup. Any member of its team may read. " + shifts + " " + concealment,
        scopes: ["oncall:read"]
      })),
    HttpApiEndpoint.patch("update", "/oncall/:groupId", {
      params: { groupId: OncallGroupId },
      payload: UpdateOncallGroupRequest,
      success: OncallGroup,
      error: [NotFound, Forbidden, ValidationFailed]
    }).pipe(agentOperation({
      summary: "Update an on-call group",
      description: "Renames the group or replaces its rotation or escalation steps (a field given replaces it " +
        "whole; an absent one is kept). Overrides stay. " + adminOnly + " " + groupRules +
        " Written to the team's audit log (`oncall.group_updated`).",
      scopes: ["oncall:write"]
    })),
    HttpApiEndpoint.delete("remove", "/oncall/:groupId", { params: { groupId: OncallGroupId }, success: Ok, error: [NotFound, Forbidden] })
      .pipe(agentOperation({
        summary: "Delete an on-call group",
        description: "Deletes the group with its rotation and overrides. Its pages keep their history (`groupId` " +
          "becomes null, `groupName` stays). " + adminOnly + " Written to the team's audit log (`oncall.group_deleted`).",
        scopes: ["oncall:write"]
      })),
    HttpApiEndpoint.post("createOverride", "/oncall/:groupId/overrides", {
      params: { groupId: OncallGroupId },
      payload: CreateOverrideRequest,
      success: OncallOverride.pipe(HttpApiSchema.status(201)),
      error: [NotFound, Forbidden, LimitReached, ValidationFailed]
    }).pipe(agentOperation({
      summary: "Put someone on call for a window",
      description: "Creates an override: `userId` is on call for the group from `startsAt` to `endsAt`, winning over " +
        "the rotation (a later override wins over an earlier one where they overlap). Admins and the owner may name " +
        "any member of the team; a member may name only themselves (else 403 `FORBIDDEN`). `userId` must be a " +
        "member of the team (else 404 `Member not found.`). `endsAt` must be after `startsAt` and in the future, " +
        `and the window at most ${ONCALL_MAX_OVERRIDE_DAYS} days (else 400 \`VALIDATION_FAILED\`). A group keeps at ` +
        `most ${ONCALL_MAX_OVERRIDES} current and future overrides (422 \`LIMIT_REACHED\`). ` + concealment +
        " Written to the team's audit log (`oncall.override_created`).",
      scopes: ["oncall:write"]
    })),
    HttpApiEndpoint.delete("removeOverride", "/oncall/:groupId/overrides/:overrideId", {
      params: { groupId: OncallGroupId, overrideId: OverrideId },
      success: Ok,
      error: [NotFound, Forbidden]
    }).pipe(agentOperation({
      summary: "Remove an override",
      description: "Removes an override of the group. Admins and the owner may remove any; a member only an " +
        "override that puts them on call (else 403 `FORBIDDEN`). An override of another group, or none, answers " +
        "404. " + concealment + " Written to the team's audit log (`oncall.override_deleted`).",
      scopes: ["oncall:write"]
    }))
  )
  .middleware(AgentAuth)
{}
