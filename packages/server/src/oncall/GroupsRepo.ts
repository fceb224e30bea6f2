/**
 * SQL of on-call groups: the group row with its rotation (members in turn
 * order, with names), escalation steps, current and future overrides and the
 * count of its open pages, read in one statement; and the writes of groups,
 * rotations and overrides. The service has already checked the caller's
 * standing. Rotation and override rows carry `team_id` so their foreign keys
 * to `team_members` hold "a person leaving the team drops out of its
 * rotations and overrides".
 */
import { EscalationTarget, RotationPeriod } from "@herald/api"
import { Array as Arr, Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import type { Statement } from "effect/sql"
import { countLocked, LockSpace } from "../db/AccountLocks.ts"
import { orMissingReference } from "../db/ForeignKeys.ts"
import type { MissingReference } from "../db/ForeignKeys.ts"
import type { OverrideSpec, RotationSpec } from "./Rotation.ts"

const iso = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`

const Step = Schema.Struct({ afterMinutes: Schema.Number, target: EscalationTarget })
const RotationMember = Schema.Struct({ userId: Schema.String, name: Schema.String })
const OverrideRow = Schema.Struct({
  id: Schema.String,
  userId: Schema.String,
  name: Schema.String,
  startsAt: Schema.String,
  endsAt: Schema.String,
  createdBy: Schema.NullOr(Schema.String)
})

/** A group as stored: what the record is computed from, and what a page needs to decide whom to page. */
const GroupData = Schema.Struct({
  id: Schema.String,
  teamId: Schema.String,
  name: Schema.String,
  period: RotationPeriod,
  handoffAt: Schema.String,
  timezone: Schema.String,
  startsAt: Schema.String,
  escalation: Schema.Array(Step),
  /** In turn order. */
  members: Schema.Array(RotationMember),
  /** Current and future overrides (ending after the read's `at`), in creation order: a later one wins an overlap. */
  overrides: Schema.Array(OverrideRow),
  openPageCount: Schema.Number,
  createdAt: Schema.String,
  updatedAt: Schema.String
})
export type GroupData = typeof GroupData.Type
export type OverrideData = typeof OverrideRow.Type

/** A group's rotation as the rotation math takes it. */
export const rotationOf = (group: GroupData): RotationSpec => ({
  members: group.members.map((m) => m.userId),
  period: group.period,
  handoffAt: group.handoffAt,
  timezone: group.timezone,
  startsAt: Date.parse(group.startsAt)
})

/** A group's overrides as the rotation math takes them (in creation order: a later one wins an overlap). */
export const overridesOf = (group: GroupData): ReadonlyArray<OverrideSpec> =>
  group.overrides.map((o) => ({ id: o.id, userId: o.userId, startsAt: Date.parse(o.startsAt), endsAt: Date.parse(o.endsAt) }))

/** The columns of a group a create or update writes. */
export interface GroupFields {
  readonly name: string
  readonly period: RotationPeriod
  readonly handoffAt: string
  readonly timezone: string
  readonly startsAt: string
  readonly escalation: ReadonlyArray<typeof Step.Type>
}

export interface NewOverride {
  readonly id: string
  readonly groupId: string
  readonly teamId: string
  readonly userId: string
  readonly startsAt: string
  readonly endsAt: string
  readonly createdBy: string
}

type Filter =
  | { readonly _tag: "group"; readonly groupId: string }
  | { readonly _tag: "team"; readonly teamId: string }
  | { readonly _tag: "memberOf"; readonly userId: string }

export class GroupsRepo extends Context.Service<GroupsRepo, {
  /** Runs `effect` in one transaction (a change, its checks and its audit entry). */
  readonly inTransaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** One group with rotation, escalation and overrides ending after `at` (default now); undefined when none. */
  readonly find: (groupId: string, at?: string) => Effect.Effect<GroupData | undefined>
  /** The team's groups, newest first. */
  readonly forTeam: (teamId: string, at: string) => Effect.Effect<ReadonlyArray<GroupData>>
  /** The groups of every team the person is a member of, newest first. */
  readonly forMember: (userId: string, at: string) => Effect.Effect<ReadonlyArray<GroupData>>
  /** The names of the teams and families the person is a member of. */
  readonly teamNames: (userId: string) => Effect.Effect<ReadonlyArray<{ readonly teamId: string; readonly name: string }>>
  /** The team's groups in this transaction, counted under the team's lock (concurrent creates count in turn). */
  readonly countLocked: (teamId: string) => Effect.Effect<number>
  readonly insert: (group: GroupFields & { readonly id: string; readonly teamId: string }) => Effect.Effect<void>
  /** Locks the group row for the rest of the transaction; its team, or undefined when it is gone. */
  readonly lock: (groupId: string) => Effect.Effect<string | undefined>
  /** Writes the fields given and stamps `updated_at`. */
  readonly update: (groupId: string, fields: Partial<GroupFields>) => Effect.Effect<void>
  /** Deletes the group and answers its name; undefined when there was none. */
  readonly remove: (groupId: string) => Effect.Effect<string | undefined>
  /** The entries of `userIds` that are members of the team. */
  readonly membersAmong: (teamId: string, userIds: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<string>>
  /** Replaces the rotation (in turn order); a person gone from the team meanwhile breaks the foreign key. */
  readonly setRotation: (teamId: string, groupId: string, userIds: ReadonlyArray<string>) => Effect.Effect<void, MissingReference>
  /** Overrides of the group ending after `at`. */
  readonly countOverrides: (groupId: string, at: string) => Effect.Effect<number>
  readonly insertOverride: (override: NewOverride) => Effect.Effect<void, MissingReference>
  /** One override of the group (whatever its window); undefined when the group has no such override. */
  readonly findOverride: (groupId: string, overrideId: string) => Effect.Effect<OverrideData | undefined>
  readonly removeOverride: (groupId: string, overrideId: string) => Effect.Effect<boolean>
}>()("herald/GroupsRepo") {
  static readonly layer = Layer.effect(GroupsRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const where = (filter: Filter): Statement.Fragment => {
      switch (filter._tag) {
        case "group":
          return sql`g.id = ${filter.groupId}`
        case "team":
          return sql`g.team_id = ${filter.teamId}`
        case "memberOf":
          return sql`g.team_id IN (SELECT team_id FROM team_members WHERE user_id = ${filter.userId})`
      }
    }

    // `at` bounds the overrides listed: those still current or to come.
    const read = SqlSchema.findAll({
      Request: Schema.Struct({ filter: Schema.Any, at: Schema.NullOr(Schema.String) }),
      Result: GroupData,
      execute: ({ at, filter }) =>
        sql`SELECT g.id, g.team_id, g.name, g.period, g.handoff_at, g.timezone, ${sql.literal(iso("g.starts_at"))} AS starts_at,
                   g.escalation, ${sql.literal(iso("g.created_at"))} AS created_at, ${sql.literal(iso("g.updated_at"))} AS updated_at,
                   COALESCE((SELECT json_agg(json_build_object('userId', m.user_id, 'name', u.name) ORDER BY m.position)
                             FROM oncall_group_members m JOIN users u ON u.id = m.user_id WHERE m.group_id = g.id), '[]') AS members,
                   COALESCE((SELECT json_agg(json_build_object('id', o.id, 'userId', o.user_id, 'name', u.name,
                                'startsAt', ${sql.literal(iso("o.starts_at"))}, 'endsAt', ${sql.literal(iso("o.ends_at"))},
                                'createdBy', o.created_by) ORDER BY o.created_at, o.id)
                             FROM oncall_overrides o JOIN users u ON u.id = o.user_id
                             WHERE o.group_id = g.id AND o.ends_at > coalesce(${at}::timestamptz, now())), '[]') AS overrides,
                   (SELECT count(*)::int FROM pages p WHERE p.group_id = g.id AND p.status <> 'resolved') AS open_page_count
            FROM oncall_groups g WHERE ${where(filter as Filter)}
            ORDER BY g.id DESC`
    })
    const readAll = (filter: Filter, at: string | null) => read({ filter, at }).pipe(Effect.orDie)

    const teamNames = SqlSchema.findAll({
      Request: Schema.String,
      Result: Schema.Struct({ teamId: Schema.String, name: Schema.String }),
      execute: (userId) =>
        sql`SELECT t.id AS team_id, t.name FROM teams t JOIN team_members m ON m.team_id = t.id WHERE m.user_id = ${userId}`
    })

    const lock = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: Schema.Struct({ teamId: Schema.String }),
      execute: (groupId) => sql`SELECT team_id FROM oncall_groups WHERE id = ${groupId} FOR UPDATE`
    })

    const remove = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: Schema.Struct({ name: Schema.String }),
      execute: (groupId) => sql`DELETE FROM oncall_groups WHERE id = ${groupId} RETURNING name`
    })

    const membersAmong = SqlSchema.findAll({
      Request: Schema.Struct({ teamId: Schema.String, ids: Schema.Array(Schema.String) }),
      Result: Schema.Struct({ userId: Schema.String }),
      execute: ({ ids, teamId }) => sql`SELECT user_id FROM team_members WHERE team_id = ${teamId} AND ${sql.in("user_id", ids)}`
    })

    const countOverrides = SqlSchema.findOne({
      Request: Schema.Struct({ groupId: Schema.String, at: Schema.String }),
      Result: Schema.Struct({ n: Schema.Number }),
      execute: ({ at, groupId }) =>
        sql`SELECT count(*)::int AS n FROM oncall_overrides WHERE group_id = ${groupId} AND ends_at > ${at}::timestamptz`
    })

    const findOverride = SqlSchema.findOneOption({
      Request: Schema.Struct({ groupId: Schema.String, overrideId: Schema.String }),
      Result: OverrideRow,
      execute: ({ groupId, overrideId }) =>
        sql`SELECT o.id, o.user_id, u.name, ${sql.literal(iso("o.starts_at"))} AS starts_at, ${sql.literal(iso("o.ends_at"))} AS ends_at,
                   o.created_by
            FROM oncall_overrides o JOIN users u ON u.id = o.user_id WHERE o.group_id = ${groupId} AND o.id = ${overrideId}`
    })

    const columns = (fields: Partial<GroupFields>): Record<string, unknown> => {
      const out: Record<string, unknown> = {}
      if (fields.name !== undefined) out.name = fields.name
      if (fields.period !== undefined) out.period = fields.period
      if (fields.handoffAt !== undefined) out.handoffAt = fields.handoffAt
      if (fields.timezone !== undefined) out.timezone = fields.timezone
      if (fields.startsAt !== undefined) out.startsAt = fields.startsAt
      if (fields.escalation !== undefined) out.escalation = JSON.stringify(fields.escalation)
      return out
    }

    return GroupsRepo.of({
      inTransaction: (effect) => sql.withTransaction(effect).pipe(Effect.catchTag("SqlError", Effect.die)),
      find: (groupId, at) =>
        readAll({ _tag: "group", groupId }, at ?? null).pipe(Effect.map((rows) => rows[0])),
      forTeam: (teamId, at) => readAll({ _tag: "team", teamId }, at),
      forMember: (userId, at) => readAll({ _tag: "memberOf", userId }, at),
      teamNames: (userId) => teamNames(userId).pipe(Effect.orDie),
      countLocked: (teamId) =>
        countLocked(sql, LockSpace.oncallGroups, teamId, sql`SELECT count(*)::int AS n FROM oncall_groups WHERE team_id = ${teamId}`),
      insert: (group) =>
        sql`INSERT INTO oncall_groups ${sql.insert({ id: group.id, teamId: group.teamId, ...columns(group) })}`.pipe(
          Effect.asVoid,
          Effect.orDie
        ),
      lock: (groupId) => lock(groupId).pipe(Effect.map((row) => Option.getOrUndefined(row)?.teamId), Effect.orDie),
      update: (groupId, fields) => {
        const changed = columns(fields)
        const set = Object.keys(changed).length === 0 ? sql`` : sql`${sql.update(changed)}, `
        return sql`UPDATE oncall_groups SET ${set}updated_at = now() WHERE id = ${groupId}`.pipe(Effect.asVoid, Effect.orDie)
      },
      remove: (groupId) => remove(groupId).pipe(Effect.map((row) => Option.getOrUndefined(row)?.name), Effect.orDie),
      membersAmong: (teamId, ids) =>
        ids.length === 0
          ? Effect.succeed([])
          : membersAmong({ teamId, ids }).pipe(Effect.map((rows) => rows.map((r) => r.userId)), Effect.orDie),
      setRotation: (teamId, groupId, userIds) =>
        Effect.gen(function*() {
          yield* sql`DELETE FROM oncall_group_members WHERE group_id = ${groupId}`.pipe(Effect.orDie)
          if (!Arr.isReadonlyArrayNonEmpty(userIds)) return
          const rows = Arr.map(userIds, (userId, position): Record<string, unknown> => ({ groupId, position, teamId, userId }))
          yield* orMissingReference(sql`INSERT INTO oncall_group_members ${sql.insert(rows)}`)
        }),
      countOverrides: (groupId, at) => countOverrides({ groupId, at }).pipe(Effect.map((row) => row.n), Effect.orDie),
      insertOverride: (override) =>
        orMissingReference(sql`INSERT INTO oncall_overrides ${sql.insert({ ...override })}`).pipe(Effect.asVoid),
      findOverride: (groupId, overrideId) =>
        findOverride({ groupId, overrideId }).pipe(Effect.map(Option.getOrUndefined), Effect.orDie),
      removeOverride: (groupId, overrideId) =>
        sql<{ id: string }>`DELETE FROM oncall_overrides WHERE group_id = ${groupId} AND id = ${overrideId} RETURNING id`.pipe(
          Effect.map((rows) => rows.length > 0),
          Effect.orDie
        )
    })
  }))
}
