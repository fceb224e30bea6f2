/**
 * Device groups of a team or family, and the devices of its members
 * (spec "Teams and families"; bodies from decisions.md).
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { Ok, Timestamp } from "../domain/Common.ts"
import { Platform } from "../domain/Identity.ts"
import { DeviceGroup } from "../domain/Teams.ts"
import { Forbidden, LimitReached, NotFound } from "../errors.ts"
import { agentOperation } from "../Operation.ts"
import { DeviceGroupId, DeviceId, TeamId, UserId } from "../Params.ts"
import { AgentAuth } from "../Security.ts"

/** People a device group lists at most (a longer `memberIds` is 400 `VALIDATION_FAILED`). */
export const DEVICE_GROUP_MAX_MEMBERS = 500
/** Devices a device group lists at most (a longer `deviceIds` is 400 `VALIDATION_FAILED`). */
export const DEVICE_GROUP_MAX_DEVICES = 500

const GroupName = Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(100))
const MemberIds = Schema.Array(UserId).check(Schema.isMaxLength(DEVICE_GROUP_MAX_MEMBERS))
const DeviceIds = Schema.Array(DeviceId).check(Schema.isMaxLength(DEVICE_GROUP_MAX_DEVICES))

/** Body of POST /teams/{id}/groups. */
export const CreateDeviceGroupRequest = Schema.Struct({
  name: GroupName,
  memberIds: Schema.optionalKey(MemberIds),
  deviceIds: Schema.optionalKey(DeviceIds)
}).annotate({ identifier: "CreateDeviceGroupRequest" })
export type CreateDeviceGroupRequest = typeof CreateDeviceGroupRequest.Type

/** Body of PATCH /teams/{id}/groups/{groupId}: a list given replaces the group's list. */
export const UpdateDeviceGroupRequest = Schema.Struct({
  name: Schema.optionalKey(GroupName),
  memberIds: Schema.optionalKey(MemberIds),
  deviceIds: Schema.optionalKey(DeviceIds)
}).annotate({ identifier: "UpdateDeviceGroupRequest" })
export type UpdateDeviceGroupRequest = typeof UpdateDeviceGroupRequest.Type

export class DeviceGroupList extends Schema.Class<DeviceGroupList>("DeviceGroupList")({
  items: Schema.Array(DeviceGroup)
}) {}

/** A device of a team member, as the team's admins see it (no push tokens). */
export class TeamDevice extends Schema.Class<TeamDevice>("TeamDevice")({
  id: Schema.String,
  deviceName: Schema.NullOr(Schema.String),
  platform: Platform,
  active: Schema.Boolean,
  userId: Schema.String,
  userName: Schema.String,
  lastSeenAt: Timestamp
}) {}

export class TeamDeviceList extends Schema.Class<TeamDeviceList>("TeamDeviceList")({
  items: Schema.Array(TeamDevice)
}) {}

const groupParams = { id: TeamId, groupId: DeviceGroupId }

const concealment = "A caller who is not a member of the team gets 404, as for a team that does not exist."
const adminOnly = "Admins and the owner only (a member: 403 `FORBIDDEN`). " + concealment
const validation = "Every `memberIds` entry must be a member of this team and every `deviceIds` entry a device of a " +
  "member of this team; any other id answers 404 (`Member not found.` / `Device not found.`). Duplicates collapse. " +
  `At most ${DEVICE_GROUP_MAX_MEMBERS} members and ${DEVICE_GROUP_MAX_DEVICES} devices (400 \`VALIDATION_FAILED\`); ` +
  "`name` 1-100 characters. A person leaving the team drops out of its groups, with their devices; a deleted device " +
  "drops out of every group."

export class DeviceGroupsGroup extends HttpApiGroup.make("deviceGroups")
  .add(
    HttpApiEndpoint.get("list", "/teams/:id/groups", { params: { id: TeamId }, success: DeviceGroupList, error: NotFound })
      .pipe(agentOperation({
        summary: "List a team's device groups",
        description: "The team's device groups, newest first, each with its members and devices. Any member may read. " +
          concealment,
        scopes: ["teams:read"]
      })),
    HttpApiEndpoint.post("create", "/teams/:id/groups", {
      params: { id: TeamId },
      payload: CreateDeviceGroupRequest,
      success: DeviceGroup.pipe(HttpApiSchema.status(201)),
      error: [NotFound, Forbidden, LimitReached]
    }).pipe(agentOperation({
      summary: "Create a device group",
      description: "Creates a named group of the team's members and their devices. " + adminOnly + " " + validation +
        " A team keeps at most 100 device groups (422 `LIMIT_REACHED` with `limit`). Written to the team's audit log " +
        "(`group.created`).",
      scopes: ["teams:write"]
    })),
    HttpApiEndpoint.get("get", "/teams/:id/groups/:groupId", { params: groupParams, success: DeviceGroup, error: NotFound })
      .pipe(agentOperation({
        summary: "Get a device group",
        description: "One DeviceGroup of the team. Any member may read. A group of another team, or none, answers 404. " +
          concealment,
        scopes: ["teams:read"]
      })),
    HttpApiEndpoint.patch("update", "/teams/:id/groups/:groupId", {
      params: groupParams,
      payload: UpdateDeviceGroupRequest,
      success: DeviceGroup,
      error: [NotFound, Forbidden]
    }).pipe(agentOperation({
      summary: "Update a device group",
      description: "Renames the group or replaces its lists: `memberIds` or `deviceIds`, when given, replace the " +
        "group's members or devices (an empty list empties it); an absent field is kept. " + adminOnly + " " +
        validation + " Written to the team's audit log (`group.updated`).",
      scopes: ["teams:write"]
    })),
    HttpApiEndpoint.delete("remove", "/teams/:id/groups/:groupId", { params: groupParams, success: Ok, error: [NotFound, Forbidden] })
      .pipe(agentOperation({
        summary: "Delete a device group",
        description: "Deletes the group (its members and devices stay in the team). " + adminOnly +
          " Written to the team's audit log (`group.deleted`).",
        scopes: ["teams:write"]
      })),
    HttpApiEndpoint.get("devices", "/teams/:id/devices", {
      params: { id: TeamId },
      success: TeamDeviceList,
      error: [NotFound, Forbidden]
    }).pipe(agentOperation({
      summary: "List the devices of a team's members",
      description: "Every device of the team's members (inactive ones included), newest first, with its owner; at " +
        "most 10,000. " + adminOnly,
      scopes: ["teams:read"]
    }))
  )
  .middleware(AgentAuth)
{}
