/**
 * SQL of device groups: the groups of a team, their member and device lists,
 * and the devices of a team's members. Every query is scoped by the team in
 * SQL; the service has already checked the caller's standing. The list rows
 * carry `team_id` so their foreign keys to `team_members` hold the rule "a
 * person leaving the team drops out of its groups, devices and all".
 */
import { DeviceGroup, DeviceGroupDevice, DeviceGroupMember, TeamDevice } from "@herald/api"
import { Array as Arr, Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { MAX_TEAM_DEVICES_LISTED } from "../config/Limits.ts"
import { countLocked, LockSpace } from "../db/AccountLocks.ts"
import { orMissingReference } from "../db/ForeignKeys.ts"
import type { MissingReference } from "../db/ForeignKeys.ts"

/** A device named in a group, with the member who owns it. */
export interface OwnedDevice {
  readonly deviceId: string
  readonly userId: string
}

const GroupRow = Schema.Struct({
  id: Schema.String,
  teamId: Schema.String,
  name: Schema.String,
  createdAt: DeviceGroup.fields.createdAt,
  updatedAt: DeviceGroup.fields.updatedAt
})
const MemberRow = Schema.Struct({ groupId: Schema.String, ...DeviceGroupMember.fields })
const DeviceRow = Schema.Struct({ groupId: Schema.String, ...DeviceGroupDevice.fields })
const GroupKey = Schema.Struct({ teamId: Schema.String, groupId: Schema.NullOr(Schema.String) })
const IdsInTeam = Schema.Struct({ teamId: Schema.String, ids: Schema.Array(Schema.String) })

export class DeviceGroupsRepo extends Context.Service<DeviceGroupsRepo, {
  /** The team's groups in this transaction, counted under the team's lock (concurrent creates count in turn). */
  readonly countLocked: (teamId: string) => Effect.Effect<number>
  readonly insert: (group: { readonly id: string; readonly teamId: string; readonly name: string }) => Effect.Effect<void>
  /** Locks the team's group for the rest of the transaction; false when the team has no such group. */
  readonly lock: (teamId: string, groupId: string) => Effect.Effect<boolean>
  /** Renames (when `name` is given) and stamps `updated_at`. */
  readonly touch: (groupId: string, name: string | undefined) => Effect.Effect<void>
  /** Deletes the team's group and answers its name; undefined when there was none. */
  readonly remove: (teamId: string, groupId: string) => Effect.Effect<string | undefined>
  /** The entries of `userIds` that are members of the team. */
  readonly membersAmong: (teamId: string, userIds: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<string>>
  /** The entries of `deviceIds` that are devices of the team's members, with their owners. */
  readonly devicesAmong: (teamId: string, deviceIds: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<OwnedDevice>>
  /** Replaces the group's member list; a person gone from the team meanwhile breaks the foreign key. */
  readonly setMembers: (teamId: string, groupId: string, userIds: ReadonlyArray<string>) => Effect.Effect<void, MissingReference>
  /** Replaces the group's device list; a device deleted (or its owner gone) meanwhile breaks a foreign key. */
  readonly setDevices: (teamId: string, groupId: string, devices: ReadonlyArray<OwnedDevice>) => Effect.Effect<void, MissingReference>
  /** The team's groups as records, newest first (one group when `groupId` is given). */
  readonly records: (teamId: string, groupId?: string) => Effect.Effect<ReadonlyArray<DeviceGroup>>
  /** Devices of the team's members, newest first, at most `MAX_TEAM_DEVICES_LISTED`. */
  readonly teamDevices: (teamId: string) => Effect.Effect<ReadonlyArray<TeamDevice>>
  /** Runs `effect` in one transaction (a change, its checks and its audit entries). */
  readonly inTransaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}>()("herald/DeviceGroupsRepo") {
  static readonly layer = Layer.effect(DeviceGroupsRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insert = SqlSchema.void({
      Request: Schema.Struct({ id: Schema.String, teamId: Schema.String, name: Schema.String }),
      execute: (group) => sql`INSERT INTO device_groups ${sql.insert(group)}`
    })

    const lock = SqlSchema.findOneOption({
      Request: Schema.Struct({ teamId: Schema.String, groupId: Schema.String }),
      Result: Schema.Struct({ id: Schema.String }),
      execute: ({ groupId, teamId }) => sql`SELECT id FROM device_groups WHERE id = ${groupId} AND team_id = ${teamId} FOR UPDATE`
    })

    const touch = SqlSchema.void({
      Request: Schema.Struct({ groupId: Schema.String, name: Schema.NullOr(Schema.String) }),
      execute: ({ groupId, name }) =>
        sql`UPDATE device_groups SET name = coalesce(${name}, name), updated_at = now() WHERE id = ${groupId}`
    })

    const remove = SqlSchema.findOneOption({
      Request: Schema.Struct({ teamId: Schema.String, groupId: Schema.String }),
      Result: Schema.Struct({ name: Schema.String }),
      execute: ({ groupId, teamId }) => sql`DELETE FROM device_groups WHERE id = ${groupId} AND team_id = ${teamId} RETURNING name`
    })

    const membersAmong = SqlSchema.findAll({
      Request: IdsInTeam,
      Result: Schema.Struct({ userId: Schema.String }),
      execute: ({ ids, teamId }) => sql`SELECT user_id FROM team_members WHERE team_id = ${teamId} AND ${sql.in("user_id", ids)}`
    })

    const devicesAmong = SqlSchema.findAll({
      Request: IdsInTeam,
      Result: Schema.Struct({ deviceId: Schema.String, userId: Schema.String }),
      execute: ({ ids, teamId }) =>
        sql`SELECT d.id AS device_id, d.user_id FROM devices d
            JOIN team_members m ON m.team_id = ${teamId} AND m.user_id = d.user_id
            WHERE ${sql.in("d.id", ids)}`
    })

    const groups = SqlSchema.findAll({
      Request: GroupKey,
      Result: GroupRow,
      execute: ({ groupId, teamId }) =>
        sql`SELECT id, team_id, name, created_at, updated_at FROM device_groups
            WHERE team_id = ${teamId}${groupId === null ? sql`` : sql` AND id = ${groupId}`}
            ORDER BY id DESC`
    })

    // `image`: Herald keeps no picture of a person yet.
    const members = SqlSchema.findAll({
      Request: GroupKey,
      Result: MemberRow,
      execute: ({ groupId, teamId }) =>
        sql`SELECT gm.group_id, u.id AS user_id, u.name, u.email, NULL::text AS image
            FROM device_group_members gm JOIN users u ON u.id = gm.user_id
            WHERE gm.team_id = ${teamId}${groupId === null ? sql`` : sql` AND gm.group_id = ${groupId}`}
            ORDER BY u.name, u.id`
    })

    const devices = SqlSchema.findAll({
      Request: GroupKey,
      Result: DeviceRow,
      execute: ({ groupId, teamId }) =>
        sql`SELECT gd.group_id, d.id, d.device_name, d.user_id, u.name AS user_name
            FROM device_group_devices gd JOIN devices d ON d.id = gd.device_id JOIN users u ON u.id = gd.user_id
            WHERE gd.team_id = ${teamId}${groupId === null ? sql`` : sql` AND gd.group_id = ${groupId}`}
            ORDER BY u.name, u.id, d.id`
    })

    const records = (teamId: string, groupId?: string) =>
      Effect.gen(function*() {
        const key = { teamId, groupId: groupId ?? null }
        const found = yield* groups(key)
        if (found.length === 0) return []
        const memberRows = yield* members(key)
        const deviceRows = yield* devices(key)
        return found.map((group) =>
          new DeviceGroup({
            ...group,
            members: memberRows.filter((m) => m.groupId === group.id).map(({ groupId: _, ...m }) => new DeviceGroupMember(m)),
            devices: deviceRows.filter((d) => d.groupId === group.id).map(({ groupId: _, ...d }) => new DeviceGroupDevice(d))
          })
        )
      }).pipe(Effect.orDie)

    const teamDevices = SqlSchema.findAll({
      Request: Schema.String,
      Result: TeamDevice,
      execute: (teamId) =>
        sql`SELECT d.id, d.device_name, d.platform, d.active, d.user_id, u.name AS user_name, d.last_seen_at
            FROM team_members m JOIN devices d ON d.user_id = m.user_id JOIN users u ON u.id = m.user_id
            WHERE m.team_id = ${teamId}
            ORDER BY d.created_at DESC, d.id DESC LIMIT ${MAX_TEAM_DEVICES_LISTED}`
    })

    return DeviceGroupsRepo.of({
      inTransaction: (effect) => sql.withTransaction(effect).pipe(Effect.catchTag("SqlError", Effect.die)),
      countLocked: (teamId) =>
        countLocked(sql, LockSpace.deviceGroups, teamId, sql`SELECT count(*)::int AS n FROM device_groups WHERE team_id = ${teamId}`),
      insert: (group) => insert(group).pipe(Effect.orDie),
      lock: (teamId, groupId) => lock({ teamId, groupId }).pipe(Effect.map(Option.isSome), Effect.orDie),
      touch: (groupId, name) => touch({ groupId, name: name ?? null }).pipe(Effect.orDie),
      remove: (teamId, groupId) => remove({ teamId, groupId }).pipe(Effect.map((row) => Option.getOrUndefined(row)?.name), Effect.orDie),
      membersAmong: (teamId, ids) =>
        ids.length === 0
          ? Effect.succeed([])
          : membersAmong({ teamId, ids }).pipe(Effect.map((rows) => rows.map((r) => r.userId)), Effect.orDie),
      devicesAmong: (teamId, ids) => ids.length === 0 ? Effect.succeed([]) : devicesAmong({ teamId, ids }).pipe(Effect.orDie),
      setMembers: (teamId, groupId, userIds) =>
        Effect.gen(function*() {
          yield* sql`DELETE FROM device_group_members WHERE group_id = ${groupId}`.pipe(Effect.orDie)
          if (!Arr.isReadonlyArrayNonEmpty(userIds)) return
          const rows = Arr.map(userIds, (userId): Record<string, unknown> => ({ groupId, teamId, userId }))
          yield* orMissingReference(sql`INSERT INTO device_group_members ${sql.insert(rows)}`)
        }),
      setDevices: (teamId, groupId, owned) =>
        Effect.gen(function*() {
          yield* sql`DELETE FROM device_group_devices WHERE group_id = ${groupId}`.pipe(Effect.orDie)
          if (!Arr.isReadonlyArrayNonEmpty(owned)) return
          const rows = Arr.map(owned, (d): Record<string, unknown> => ({ groupId, teamId, userId: d.userId, deviceId: d.deviceId }))
          yield* orMissingReference(sql`INSERT INTO device_group_devices ${sql.insert(rows)}`)
        }),
      records,
      teamDevices: (teamId) => teamDevices(teamId).pipe(Effect.orDie)
    })
  }))
}
