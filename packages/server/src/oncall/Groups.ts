/**
 * On-call groups: rotations, escalation steps and overrides of a team or
 * family (spec "On-call"). Any member reads a group; admins and the owner
 * change it; a member may put only themselves on call and remove only their
 * own override. A non-member gets 404 for the group, as for one that does not
 * exist (Membership: 404 non-member, 403 below the role).
 *
 * `current` and `upcoming` are computed at each read from the rotation and
 * the overrides (Rotation.ts), never stored, so they are right at any time.
 * Each change runs in one transaction with the group row and the caller's
 * membership locked, and writes its audit entry there. A person named in a
 * body must be a member of the team; one leaving between the check and the
 * write breaks a foreign key, which is the same 404 (db/ForeignKeys.ts).
 */
import {
  Forbidden,
  LimitReached,
  NotFound,
  OncallGroup,
  OncallGroupList,
  OncallGroupRef,
  OncallMe,
  OncallMyShift,
  OncallOverride,
  OncallPerson,
  OncallRotation,
  OncallShift,
  EscalationStep,
  PersonOncall,
  PersonOncallGroup,
  ValidationFailed
} from "@herald/api"
import type { CreateOncallGroupRequest, CreateOverrideRequest, RotationInput, UpdateOncallGroupRequest } from "@herald/api"
import { Clock, Context, Effect, Layer } from "effect"
import { ONCALL_MAX_GROUPS, ONCALL_MAX_OVERRIDE_DAYS, ONCALL_MAX_OVERRIDES } from "../config/Limits.ts"
import { checkLimit } from "../db/AccountLocks.ts"
import { makeId } from "../lib/Ids.ts"
import { AuditTrail } from "../teams/AuditTrail.ts"
import type { AuditActor } from "../teams/AuditTrail.ts"
import { atLeast, Membership, teamNotFound } from "../teams/Membership.ts"
import { PagesRepo } from "./PagesRepo.ts"
import { GroupsRepo, overridesOf, rotationOf } from "./GroupsRepo.ts"
import type { GroupData, GroupFields } from "./GroupsRepo.ts"
import { isValidTimezone, shiftsFrom } from "./Rotation.ts"
import type { Shift } from "./Rotation.ts"

const groupNotFound = new NotFound({ error: "On-call group not found." })
const memberNotFound = new NotFound({ error: "Member not found." })
const overrideNotFound = new NotFound({ error: "Override not found." })

/** Who calls: the account acting, and how the audit log names it. */
export interface Caller {
  readonly userId: string
  readonly actor: AuditActor
}

/** Shifts GET /oncall/me shows per group at most. */
const MY_SHIFTS_PER_GROUP = 5
const DAY_MS = 86_400_000

const iso = (millis: number) => new Date(millis).toISOString()

const invalid = (path: string, message: string) =>
  new ValidationFailed({ error: "Invalid on-call group.", issues: [{ path, message }] })

// Herald keeps no picture of a person yet.
const person = (userId: string, name: string) => new OncallPerson({ userId, name, image: null })

const namesOf = (group: GroupData): ReadonlyMap<string, string> =>
  new Map([...group.members.map((m) => [m.userId, m.name] as const), ...group.overrides.map((o) => [o.userId, o.name] as const)])

const shiftRecord = (names: ReadonlyMap<string, string>, shift: Shift) =>
  new OncallShift({
    person: person(shift.userId, names.get(shift.userId) ?? ""),
    startsAt: iso(shift.startsAt),
    endsAt: iso(shift.endsAt),
    override: shift.overrideId !== undefined,
    ...(shift.overrideId === undefined ? {} : { overrideId: shift.overrideId })
  })

/** The record as of `now`: the shift covering now (if any) and the next 5. */
export const toRecord = (group: GroupData, now: number): OncallGroup => {
  const names = namesOf(group)
  const shifts = shiftsFrom(rotationOf(group), overridesOf(group), now, 6)
  const first = shifts[0]
  const covering = first !== undefined && first.startsAt <= now && now < first.endsAt
  return new OncallGroup({
    id: group.id,
    teamId: group.teamId,
    name: group.name,
    rotation: new OncallRotation({
      members: group.members.map((m) => person(m.userId, m.name)),
      period: group.period,
      handoffAt: group.handoffAt,
      timezone: group.timezone,
      startsAt: group.startsAt
    }),
    escalation: group.escalation.map((s) => new EscalationStep(s)),
    current: covering ? shiftRecord(names, first) : null,
    upcoming: (covering ? shifts.slice(1, 6) : shifts.slice(0, 5)).map((s) => shiftRecord(names, s)),
    overrides: [...group.overrides]
      .sort((a, b) => Date.parse(a.startsAt) - Date.parse(b.startsAt) || a.id.localeCompare(b.id))
      .map((o) => new OncallOverride({ id: o.id, person: person(o.userId, o.name), startsAt: o.startsAt, endsAt: o.endsAt })),
    openPageCount: group.openPageCount,
    createdAt: group.createdAt,
    updatedAt: group.updatedAt
  })
}

export class Groups extends Context.Service<Groups, {
  readonly list: (userId: string, teamId: string) => Effect.Effect<OncallGroupList, NotFound>
  /** One group as the person sees it; 404 when it is not of one of their teams. */
  readonly get: (userId: string, groupId: string) => Effect.Effect<OncallGroup, NotFound>
  readonly create: (caller: Caller, teamId: string, input: CreateOncallGroupRequest) => Effect.Effect<
    OncallGroup,
    NotFound | Forbidden | LimitReached | ValidationFailed
  >
  readonly update: (caller: Caller, groupId: string, input: UpdateOncallGroupRequest) => Effect.Effect<
    OncallGroup,
    NotFound | Forbidden | ValidationFailed
  >
  readonly remove: (caller: Caller, groupId: string) => Effect.Effect<void, NotFound | Forbidden>
  readonly createOverride: (caller: Caller, groupId: string, input: CreateOverrideRequest) => Effect.Effect<
    OncallOverride,
    NotFound | Forbidden | LimitReached | ValidationFailed
  >
  readonly removeOverride: (caller: Caller, groupId: string, overrideId: string) => Effect.Effect<void, NotFound | Forbidden>
  /** The person's shifts across their teams' groups, soonest first, and the open pages that notified them. */
  readonly me: (userId: string) => Effect.Effect<OncallMe>
  /** `me`, and every group of the person's teams with who is on call now and next (the console's on-call page). */
  readonly overview: (userId: string) => Effect.Effect<PersonOncall>
}>()("herald/Groups") {
  static readonly layerNoDeps = Layer.effect(Groups, Effect.gen(function*() {
    const repo = yield* GroupsRepo
    const pages = yield* PagesRepo
    const membership = yield* Membership
    const audit = yield* AuditTrail

    const now = Clock.currentTimeMillis

    /** The rotation's columns and member ids once every rule holds. */
    const checkRotation = Effect.fnUntraced(function*(teamId: string, rotation: RotationInput) {
      if (!isValidTimezone(rotation.timezone)) {
        return yield* invalid("rotation.timezone", "Expected an IANA time-zone name such as Europe/Berlin")
      }
      if (new Set(rotation.members).size !== rotation.members.length) {
        return yield* invalid("rotation.members", "Expected each person at most once")
      }
      const found = yield* repo.membersAmong(teamId, rotation.members)
      if (found.length !== rotation.members.length) return yield* memberNotFound
      return {
        members: rotation.members,
        fields: {
          period: rotation.period,
          handoffAt: rotation.handoffAt,
          timezone: rotation.timezone,
          startsAt: iso(Date.parse(rotation.startsAt))
        }
      }
    })

    const checkEscalation = Effect.fnUntraced(function*(steps: CreateOncallGroupRequest["escalation"]) {
      const list = steps ?? []
      for (let i = 1; i < list.length; i++) {
        if (list[i]!.afterMinutes <= list[i - 1]!.afterMinutes) {
          return yield* invalid(`escalation.${i}.afterMinutes`, "Expected afterMinutes strictly ascending")
        }
      }
      return list.map((s) => ({ afterMinutes: s.afterMinutes, target: s.target }))
    })

    const setRotation = (teamId: string, groupId: string, members: ReadonlyArray<string>) =>
      repo.setRotation(teamId, groupId, members).pipe(Effect.catchTag("MissingReference", () => Effect.fail(memberNotFound)))

    /** The group's team once the caller stands at least `least` in it, both rows locked; 404 for a non-member. */
    const lockAs = Effect.fnUntraced(function*(userId: string, groupId: string, least: "member" | "admin") {
      const teamId = yield* repo.lock(groupId)
      if (teamId === undefined) return yield* groupNotFound
      const standing = yield* membership.require(userId, teamId, least, { forUpdate: true }).pipe(
        Effect.catchTag("NotFound", () => Effect.fail(groupNotFound))
      )
      return standing
    })

    const readOne = Effect.fnUntraced(function*(groupId: string) {
      const found = yield* repo.find(groupId)
      if (found === undefined) return yield* groupNotFound
      return toRecord(found, yield* now)
    })

    const list = Effect.fn("Groups.list")(function*(userId: string, teamId: string) {
      // Reading needs membership only: no role to fall short of, so no 403.
      if ((yield* membership.standing(userId, teamId)) === undefined) return yield* teamNotFound
      const at = yield* now
      return new OncallGroupList({ items: (yield* repo.forTeam(teamId, iso(at))).map((g) => toRecord(g, at)) })
    })

    const get = Effect.fn("Groups.get")(function*(userId: string, groupId: string) {
      const at = yield* now
      const found = yield* repo.find(groupId, iso(at))
      if (found === undefined || (yield* membership.standing(userId, found.teamId)) === undefined) {
        return yield* groupNotFound
      }
      return toRecord(found, at)
    })

    const create = Effect.fn("Groups.create")(function*(caller: Caller, teamId: string, input: CreateOncallGroupRequest) {
      return yield* repo.inTransaction(Effect.gen(function*() {
        yield* membership.require(caller.userId, teamId, "admin", { forUpdate: true })
        const rotation = yield* checkRotation(teamId, input.rotation)
        const escalation = yield* checkEscalation(input.escalation)
        yield* checkLimit({ count: repo.countLocked(teamId), limit: ONCALL_MAX_GROUPS, error: `A team keeps at most ${ONCALL_MAX_GROUPS} on-call groups.` })
        const id = yield* makeId("ocg")
        yield* repo.insert({ id, teamId, name: input.name, ...rotation.fields, escalation })
        yield* setRotation(teamId, id, rotation.members)
        yield* audit.record(caller.actor, {
          teamId,
          action: "oncall.group_created",
          targetType: "oncall_group",
          targetId: id,
          metadata: { name: input.name, rotation: { ...rotation.fields, members: rotation.members }, escalation }
        })
        return yield* readOne(id)
      }))
    })

    const update = Effect.fn("Groups.update")(function*(caller: Caller, groupId: string, input: UpdateOncallGroupRequest) {
      return yield* repo.inTransaction(Effect.gen(function*() {
        const { teamId } = yield* lockAs(caller.userId, groupId, "admin")
        const fields: { -readonly [K in keyof GroupFields]?: GroupFields[K] } = {}
        const changes: Record<string, unknown> = {}
        if (input.name !== undefined) fields.name = changes.name = input.name
        if (input.rotation !== undefined) {
          const rotation = yield* checkRotation(teamId, input.rotation)
          Object.assign(fields, rotation.fields)
          yield* setRotation(teamId, groupId, rotation.members)
          changes.rotation = { ...rotation.fields, members: rotation.members }
        }
        if (input.escalation !== undefined) {
          fields.escalation = yield* checkEscalation(input.escalation)
          changes.escalation = fields.escalation
        }
        yield* repo.update(groupId, fields)
        yield* audit.record(caller.actor, {
          teamId,
          action: "oncall.group_updated",
          targetType: "oncall_group",
          targetId: groupId,
          metadata: changes
        })
        return yield* readOne(groupId)
      }))
    })

    const remove = Effect.fn("Groups.remove")(function*(caller: Caller, groupId: string) {
      yield* repo.inTransaction(Effect.gen(function*() {
        const { teamId } = yield* lockAs(caller.userId, groupId, "admin")
        // Pages of the group keep their history: their group_id becomes null (ON DELETE SET NULL).
        const name = yield* repo.remove(groupId)
        if (name === undefined) return yield* groupNotFound
        yield* audit.record(caller.actor, {
          teamId,
          action: "oncall.group_deleted",
          targetType: "oncall_group",
          targetId: groupId,
          metadata: { name }
        })
      }))
    })

    const createOverride = Effect.fn("Groups.createOverride")(
      function*(caller: Caller, groupId: string, input: CreateOverrideRequest) {
        return yield* repo.inTransaction(Effect.gen(function*() {
          const standing = yield* lockAs(caller.userId, groupId, "member")
          const { teamId } = standing
          if (!atLeast(standing.role, "admin") && input.userId !== caller.userId) {
            return yield* new Forbidden({ error: "A member may put only themselves on call." })
          }
          const startsAt = Date.parse(input.startsAt)
          const endsAt = Date.parse(input.endsAt)
          const at = yield* now
          if (endsAt <= startsAt) return yield* invalid("endsAt", "Expected endsAt after startsAt")
          if (endsAt <= at) return yield* invalid("endsAt", "Expected endsAt in the future")
          if (endsAt - startsAt > ONCALL_MAX_OVERRIDE_DAYS * DAY_MS) {
            return yield* invalid("endsAt", `Expected a window of at most ${ONCALL_MAX_OVERRIDE_DAYS} days`)
          }
          if ((yield* repo.membersAmong(teamId, [input.userId])).length === 0) return yield* memberNotFound
          // Counted under the group's row lock (lockAs).
          yield* checkLimit({
            count: repo.countOverrides(groupId, iso(at)),
            limit: ONCALL_MAX_OVERRIDES,
            error: `An on-call group keeps at most ${ONCALL_MAX_OVERRIDES} current and future overrides.`
          })
          const id = yield* makeId("ovr")
          const window = { startsAt: iso(startsAt), endsAt: iso(endsAt) }
          yield* repo.insertOverride({ id, groupId, teamId, userId: input.userId, ...window, createdBy: caller.userId }).pipe(
            Effect.catchTag("MissingReference", () => Effect.fail(memberNotFound))
          )
          yield* repo.update(groupId, {})
          yield* audit.record(caller.actor, {
            teamId,
            action: "oncall.override_created",
            targetType: "oncall_override",
            targetId: id,
            metadata: { groupId, userId: input.userId, ...window }
          })
          const created = yield* repo.findOverride(groupId, id)
          if (created === undefined) return yield* memberNotFound
          return new OncallOverride({ id, person: person(created.userId, created.name), ...window })
        }))
      }
    )

    const removeOverride = Effect.fn("Groups.removeOverride")(function*(caller: Caller, groupId: string, overrideId: string) {
      yield* repo.inTransaction(Effect.gen(function*() {
        const standing = yield* lockAs(caller.userId, groupId, "member")
        const found = yield* repo.findOverride(groupId, overrideId)
        if (found === undefined) return yield* overrideNotFound
        if (!atLeast(standing.role, "admin") && found.userId !== caller.userId) {
          return yield* new Forbidden({ error: "A member may remove only an override that puts them on call." })
        }
        yield* repo.removeOverride(groupId, overrideId)
        yield* repo.update(groupId, {})
        yield* audit.record(caller.actor, {
          teamId: standing.teamId,
          action: "oncall.override_deleted",
          targetType: "oncall_override",
          targetId: overrideId,
          metadata: { groupId, userId: found.userId, startsAt: found.startsAt, endsAt: found.endsAt }
        })
      }))
    })

    /** The person's shifts in `groups` from `at`, soonest first. */
    const shiftsOf = (userId: string, groups: ReadonlyArray<GroupData>, at: number) => {
      const shifts = groups.flatMap((group) => {
        const names = namesOf(group)
        const ref = new OncallGroupRef({ id: group.id, name: group.name, teamId: group.teamId })
        // Enough shifts for every member to come round 5 times, plus the pieces overrides cut.
        const count = Math.min(500, MY_SHIFTS_PER_GROUP * Math.max(1, group.members.length) + 2 * group.overrides.length + 1)
        return shiftsFrom(rotationOf(group), overridesOf(group), at, count)
          .filter((s) => s.userId === userId)
          .slice(0, MY_SHIFTS_PER_GROUP)
          .map((s) => ({ startsAt: s.startsAt, mine: new OncallMyShift({ group: ref, shift: shiftRecord(names, s) }) }))
      })
      shifts.sort((a, b) => a.startsAt - b.startsAt)
      return shifts.map((s) => s.mine)
    }

    const me = Effect.fn("Groups.me")(function*(userId: string) {
      const at = yield* now
      const groups = yield* repo.forMember(userId, iso(at))
      return new OncallMe({ shifts: shiftsOf(userId, groups, at), pages: yield* pages.openFor(userId) })
    })

    const overview = Effect.fn("Groups.overview")(function*(userId: string) {
      const at = yield* now
      const [groups, teams, paged] = yield* Effect.all([repo.forMember(userId, iso(at)), repo.teamNames(userId), pages.openFor(userId)])
      const teamName = new Map(teams.map((t) => [t.teamId, t.name]))
      return new PersonOncall({
        groups: groups.map((group) => new PersonOncallGroup({ ...toRecord(group, at), teamName: teamName.get(group.teamId) ?? "" })),
        shifts: shiftsOf(userId, groups, at),
        pages: paged
      })
    })

    return Groups.of({ list, get, create, update, remove, createOverride, removeOverride, me, overview })
  }))

  static readonly layer = Groups.layerNoDeps.pipe(
    Layer.provide([GroupsRepo.layer, PagesRepo.layer, Membership.layer, AuditTrail.layer])
  )
}
