/**
 * Device groups: named sets of a team's members and of their devices, and the
 * list of every device of the team's members. Any member reads groups; admins
 * and the owner change them and read the devices (Membership: 404 for a
 * non-member, 403 below the role).
 *
 * Ids a body names are checked against the team, like any id a body names in
 * Herald: a person not in the team, or a device not of one of its members,
 * answers 404 as a missing one would. The check and the write run in one
 * transaction with the caller's membership locked; a person leaving or a
 * device deleted between them breaks a foreign key, which is the same 404
 * (db/ForeignKeys.ts). Each change writes its audit entry in that transaction.
 */
import { DeviceGroupList, LimitReached, NotFound, TeamDeviceList } from "@herald/api"
import type { CreateDeviceGroupRequest, DeviceGroup, Forbidden, UpdateDeviceGroupRequest } from "@herald/api"
import { Context, Effect, Layer } from "effect"
import { MAX_DEVICE_GROUPS } from "../config/Limits.ts"
import { checkLimit } from "../db/AccountLocks.ts"
import { makeId } from "../lib/Ids.ts"
import { AuditTrail } from "./AuditTrail.ts"
import type { AuditActor } from "./AuditTrail.ts"
import { DeviceGroupsRepo } from "./DeviceGroupsRepo.ts"
import type { OwnedDevice } from "./DeviceGroupsRepo.ts"
import { Membership, teamNotFound } from "./Membership.ts"

const groupNotFound = new NotFound({ error: "Device group not found." })
const memberNotFound = new NotFound({ error: "Member not found." })
const deviceNotFound = new NotFound({ error: "Device not found." })

/** Who calls: the account acting, and how the audit log names it. */
export interface Caller {
  readonly userId: string
  readonly actor: AuditActor
}

const distinct = (ids: ReadonlyArray<string>): ReadonlyArray<string> => [...new Set(ids)]

export class DeviceGroups extends Context.Service<DeviceGroups, {
  readonly list: (userId: string, teamId: string) => Effect.Effect<DeviceGroupList, NotFound>
  readonly get: (userId: string, teamId: string, groupId: string) => Effect.Effect<DeviceGroup, NotFound>
  readonly create: (caller: Caller, teamId: string, input: CreateDeviceGroupRequest) => Effect.Effect<
    DeviceGroup,
    NotFound | Forbidden | LimitReached
  >
  readonly update: (caller: Caller, teamId: string, groupId: string, input: UpdateDeviceGroupRequest) => Effect.Effect<
    DeviceGroup,
    NotFound | Forbidden
  >
  readonly remove: (caller: Caller, teamId: string, groupId: string) => Effect.Effect<void, NotFound | Forbidden>
  readonly devices: (userId: string, teamId: string) => Effect.Effect<TeamDeviceList, NotFound | Forbidden>
}>()("herald/DeviceGroups") {
  static readonly layerNoDeps = Layer.effect(DeviceGroups, Effect.gen(function*() {
    const repo = yield* DeviceGroupsRepo
    const membership = yield* Membership
    const audit = yield* AuditTrail

    const transaction = repo.inTransaction

    /** The member ids, deduplicated, once every one is a member of the team. */
    const checkMembers = Effect.fnUntraced(function*(teamId: string, ids: ReadonlyArray<string>) {
      const wanted = distinct(ids)
      const found = yield* repo.membersAmong(teamId, wanted)
      if (found.length !== wanted.length) return yield* memberNotFound
      return wanted
    })

    /** The devices, deduplicated, with their owners, once every one is a device of a member of the team. */
    const checkDevices = Effect.fnUntraced(function*(teamId: string, ids: ReadonlyArray<string>) {
      const wanted = distinct(ids)
      const found = new Map((yield* repo.devicesAmong(teamId, wanted)).map((d) => [d.deviceId, d]))
      if (found.size !== wanted.length) return yield* deviceNotFound
      // In the caller's order, as the audit entry records them.
      return wanted.map((id) => found.get(id)!)
    })

    const setMembers = (teamId: string, groupId: string, userIds: ReadonlyArray<string>) =>
      repo.setMembers(teamId, groupId, userIds).pipe(Effect.catchTag("MissingReference", () => Effect.fail(memberNotFound)))
    const setDevices = (teamId: string, groupId: string, devices: ReadonlyArray<OwnedDevice>) =>
      repo.setDevices(teamId, groupId, devices).pipe(Effect.catchTag("MissingReference", () => Effect.fail(deviceNotFound)))

    // Reading needs membership only: no role to fall short of, so no 403.
    const requireMember = (userId: string, teamId: string) =>
      Effect.flatMap(membership.standing(userId, teamId), (found) => found === undefined ? Effect.fail(teamNotFound) : Effect.void)

    const one = (teamId: string, groupId: string) =>
      Effect.flatMap(repo.records(teamId, groupId), ([group]) => group === undefined ? Effect.fail(groupNotFound) : Effect.succeed(group))

    const list = Effect.fn("DeviceGroups.list")(function*(userId: string, teamId: string) {
      yield* requireMember(userId, teamId)
      return new DeviceGroupList({ items: yield* repo.records(teamId) })
    })

    const get = Effect.fn("DeviceGroups.get")(function*(userId: string, teamId: string, groupId: string) {
      yield* requireMember(userId, teamId)
      return yield* one(teamId, groupId)
    })

    const create = Effect.fn("DeviceGroups.create")(function*(caller: Caller, teamId: string, input: CreateDeviceGroupRequest) {
      return yield* transaction(Effect.gen(function*() {
        yield* membership.require(caller.userId, teamId, "admin", { forUpdate: true })
        yield* checkLimit({ count: repo.countLocked(teamId), limit: MAX_DEVICE_GROUPS, error: `A team keeps at most ${MAX_DEVICE_GROUPS} device groups.` })
        const memberIds = yield* checkMembers(teamId, input.memberIds ?? [])
        const devices = yield* checkDevices(teamId, input.deviceIds ?? [])
        const id = yield* makeId("grp")
        yield* repo.insert({ id, teamId, name: input.name })
        yield* setMembers(teamId, id, memberIds)
        yield* setDevices(teamId, id, devices)
        yield* audit.record(caller.actor, {
          teamId,
          action: "group.created",
          targetType: "device_group",
          targetId: id,
          metadata: { name: input.name, memberIds, deviceIds: devices.map((d) => d.deviceId) }
        })
        return yield* one(teamId, id)
      }))
    })

    const update = Effect.fn("DeviceGroups.update")(
      function*(caller: Caller, teamId: string, groupId: string, input: UpdateDeviceGroupRequest) {
        return yield* transaction(Effect.gen(function*() {
          yield* membership.require(caller.userId, teamId, "admin", { forUpdate: true })
          if (!(yield* repo.lock(teamId, groupId))) return yield* groupNotFound
          const changes: Record<string, unknown> = {}
          if (input.name !== undefined) changes.name = input.name
          if (input.memberIds !== undefined) {
            const memberIds = yield* checkMembers(teamId, input.memberIds)
            yield* setMembers(teamId, groupId, memberIds)
            changes.memberIds = memberIds
          }
          if (input.deviceIds !== undefined) {
            const devices = yield* checkDevices(teamId, input.deviceIds)
            yield* setDevices(teamId, groupId, devices)
            changes.deviceIds = devices.map((d) => d.deviceId)
          }
          yield* repo.touch(groupId, input.name)
          yield* audit.record(caller.actor, {
            teamId,
            action: "group.updated",
            targetType: "device_group",
            targetId: groupId,
            metadata: changes
          })
          return yield* one(teamId, groupId)
        }))
      }
    )

    const remove = Effect.fn("DeviceGroups.remove")(function*(caller: Caller, teamId: string, groupId: string) {
      yield* transaction(Effect.gen(function*() {
        yield* membership.require(caller.userId, teamId, "admin", { forUpdate: true })
        const name = yield* repo.remove(teamId, groupId)
        if (name === undefined) return yield* groupNotFound
        yield* audit.record(caller.actor, {
          teamId,
          action: "group.deleted",
          targetType: "device_group",
          targetId: groupId,
          metadata: { name }
        })
      }))
    })

    const devices = Effect.fn("DeviceGroups.devices")(function*(userId: string, teamId: string) {
      yield* membership.require(userId, teamId, "admin")
      return new TeamDeviceList({ items: yield* repo.teamDevices(teamId) })
    })

    return DeviceGroups.of({ list, get, create, update, remove, devices })
  }))

  static readonly layer = DeviceGroups.layerNoDeps.pipe(
    Layer.provide([DeviceGroupsRepo.layer, Membership.layer, AuditTrail.layer])
  )
}
