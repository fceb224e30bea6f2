/**
 * Teams and families: creating them, reading them as one member sees them,
 * and the membership changes (rename, settings, roles, ownership transfer,
 * leave, removal, delete) with decisions.md's role rules. Each change runs in
 * one transaction with its audit entry and with the membership rows it
 * depends on locked, so a role check and the change it guards see one state.
 *
 * Lock order, to stay free of deadlocks with each other and with the other
 * team writers: member rows first, several in `user_id` order, then anything
 * else (services, apps, the team row a delete or an audit entry touches).
 */
import { Conflict, Forbidden, LimitReached, NotFound, Team, TeamDetail } from "@herald/api"
import type { TeamKind, TeamRole } from "@herald/api"
import { Context, Effect, Layer } from "effect"
import { MAX_FAMILIES_PER_PERSON } from "../config/Limits.ts"
import { withinLimit } from "../db/AccountLocks.ts"
import { makeId } from "../lib/Ids.ts"
import type { AuditActor } from "./AuditTrail.ts"
import { AuditTrail } from "./AuditTrail.ts"
import { Membership, teamNotFound } from "./Membership.ts"
import { TeamsRepo } from "./TeamsRepo.ts"
import type { TeamPatch } from "./TeamsRepo.ts"

const memberNotFound = new NotFound({ error: "Member not found." })
const familiesOnly = new Forbidden({
  error: "Only families can be created through the API (`kind: \"family\"`); an operator creates teams."
})

export interface CreateTeamInput {
  readonly kind?: TeamKind
  readonly name: string
}

export class Teams extends Context.Service<Teams, {
  /** The team as `userId` (a member) sees it; 404 for anyone else. */
  readonly get: (userId: string, teamId: string) => Effect.Effect<Team, NotFound>
  /** The team and its members. */
  readonly detail: (userId: string, teamId: string) => Effect.Effect<TeamDetail, NotFound>
  /** Teams the user belongs to, newest first. */
  readonly list: (userId: string) => Effect.Effect<ReadonlyArray<Team>>
  /** A family with the caller as owner; any other `kind`: 403. */
  readonly createFamily: (
    actor: AuditActor,
    userId: string,
    input: CreateTeamInput
  ) => Effect.Effect<Team, Forbidden | LimitReached>
  /** A workplace team (plan `team`) owned by `ownerId`: the operator's command, no limit. */
  readonly createTeam: (actor: AuditActor, input: { readonly name: string; readonly ownerId: string }) => Effect.Effect<Team>
  readonly update: (actor: AuditActor, userId: string, teamId: string, patch: TeamPatch) => Effect.Effect<Team, NotFound | Forbidden>
  readonly remove: (actor: AuditActor, userId: string, teamId: string) => Effect.Effect<void, NotFound | Forbidden>
  readonly leave: (actor: AuditActor, userId: string, teamId: string) => Effect.Effect<void, NotFound | Conflict>
  readonly setRole: (
    actor: AuditActor,
    userId: string,
    teamId: string,
    targetId: string,
    role: TeamRole
  ) => Effect.Effect<TeamDetail, NotFound | Forbidden | Conflict>
  readonly removeMember: (
    actor: AuditActor,
    userId: string,
    teamId: string,
    targetId: string
  ) => Effect.Effect<void, NotFound | Forbidden | Conflict>
}>()("herald/Teams") {
  static readonly layerNoDeps = Layer.effect(Teams, Effect.gen(function*() {
    const repo = yield* TeamsRepo
    const membership = yield* Membership
    const audit = yield* AuditTrail

    const get = (userId: string, teamId: string) =>
      Effect.flatMap(repo.find(userId, teamId), (team) => team === undefined ? Effect.fail(teamNotFound) : Effect.succeed(team))
    const detail = (userId: string, teamId: string) =>
      Effect.gen(function*() {
        const team = yield* get(userId, teamId)
        return new TeamDetail({ ...team, members: yield* repo.members(teamId) })
      })
    // Inside a change's transaction the team is still there (the caller's row is locked); a miss is a bug.
    const current = (userId: string, teamId: string) => Effect.orDie(get(userId, teamId))

    const create = (actor: AuditActor, ownerId: string, kind: TeamKind, name: string) =>
      Effect.gen(function*() {
        const id = yield* makeId("team")
        yield* repo.insert({ id, kind, plan: kind === "family" ? "free" : "team", name, ownerId })
        yield* audit.record(actor, { teamId: id, action: "team.created", targetType: "team", targetId: id, metadata: { name, kind } })
        return yield* current(ownerId, id)
      })

    const createFamily = Effect.fn("Teams.createFamily")(function*(actor: AuditActor, userId: string, input: CreateTeamInput) {
      if (input.kind !== "family") return yield* familiesOnly
      return yield* repo.inTransaction(Effect.gen(function*() {
        // Every family lists in GET /teams and costs its owner's attention: a person belongs to a bounded number.
        return yield* withinLimit({
          count: repo.countLocked(userId, "family"),
          limit: MAX_FAMILIES_PER_PERSON,
          error: `A person belongs to at most ${MAX_FAMILIES_PER_PERSON} families.`
        }, create(actor, userId, "family", input.name))
      }))
    })

    const createTeam = Effect.fn("Teams.createTeam")(function*(actor: AuditActor, input: { readonly name: string; readonly ownerId: string }) {
      return yield* repo.inTransaction(create(actor, input.ownerId, "team", input.name))
    })

    const update = Effect.fn("Teams.update")(function*(actor: AuditActor, userId: string, teamId: string, patch: TeamPatch) {
      // decisions.md: renaming is an admin's; auto-join and retention are the owner's (a mixed body needs the higher).
      const least: TeamRole = patch.autoJoinVerifiedDomain !== undefined || patch.retentionDays !== undefined ? "owner" : "admin"
      return yield* repo.inTransaction(Effect.gen(function*() {
        yield* membership.require(userId, teamId, least, { forUpdate: true })
        const before = yield* current(userId, teamId)
        yield* repo.update(teamId, patch)
        const fields = Object.keys(patch)
        if (fields.length > 0) {
          const onlyName = fields.length === 1 && patch.name !== undefined
          yield* audit.record(actor, {
            teamId,
            action: onlyName ? "team.renamed" : "team.updated",
            targetType: "team",
            targetId: teamId,
            metadata: onlyName ? { from: before.name, to: patch.name } : { changes: { ...patch } }
          })
        }
        return yield* current(userId, teamId)
      }))
    })

    const remove = Effect.fn("Teams.remove")(function*(_actor: AuditActor, userId: string, teamId: string) {
      // Answer outsiders and non-owners before taking any lock of the team's rows.
      yield* membership.require(userId, teamId, "owner")
      yield* repo.inTransaction(Effect.gen(function*() {
        // Every member row in order (a leave or role change in flight finishes first), then the check again.
        yield* repo.lockMembers(teamId, undefined)
        yield* membership.require(userId, teamId, "owner", { forUpdate: true })
        // No `team.deleted` entry: the team's audit log is deleted with it (ON DELETE CASCADE). Apps
        // and shared services go back to whoever added them by their foreign keys (SET NULL).
        yield* repo.remove(teamId)
      }))
    })

    /** A person leaving or removed: their shared services and apps come back to them, each change logged. */
    const depart = (actor: AuditActor, teamId: string, leaverId: string) =>
      Effect.gen(function*() {
        for (const id of yield* repo.unshareServices(teamId, leaverId)) {
          yield* audit.record(actor, { teamId, action: "service.unshared", targetType: "service", targetId: id, metadata: { userId: leaverId } })
        }
        for (const id of yield* repo.unshareApps(teamId, leaverId)) {
          yield* audit.record(actor, { teamId, action: "app.unshared", targetType: "app", targetId: id, metadata: { userId: leaverId } })
        }
        // Device-group membership goes with the member row (ON DELETE CASCADE).
        yield* repo.removeMember(teamId, leaverId)
      })

    const leave = Effect.fn("Teams.leave")(function*(actor: AuditActor, userId: string, teamId: string) {
      yield* repo.inTransaction(Effect.gen(function*() {
        const standing = yield* membership.standing(userId, teamId, { forUpdate: true })
        if (standing === undefined) return yield* teamNotFound
        if (standing.role === "owner") {
          return yield* new Conflict({ error: "The owner cannot leave: transfer ownership to another member first." })
        }
        yield* depart(actor, teamId, userId)
        yield* audit.record(actor, { teamId, action: "member.left", targetType: "user", targetId: userId, metadata: { role: standing.role } })
      }))
    })

    /** Both rows locked in `user_id` order, then the caller's standing checked on the locked row. */
    const lockPair = (userId: string, teamId: string, targetId: string, least: TeamRole) =>
      Effect.gen(function*() {
        yield* membership.require(userId, teamId, least)
        const roles = yield* repo.lockMembers(teamId, [userId, targetId])
        const standing = yield* membership.require(userId, teamId, least, { forUpdate: true })
        return { standing, target: roles.get(targetId) }
      })

    const setRole = Effect.fn("Teams.setRole")(
      function*(actor: AuditActor, userId: string, teamId: string, targetId: string, role: TeamRole) {
        yield* repo.inTransaction(Effect.gen(function*() {
          // decisions.md: only the owner promotes admins; changing roles at all is the owner's.
          const { target } = yield* lockPair(userId, teamId, targetId, "owner")
          if (targetId === userId) {
            if (role === "owner") return
            return yield* new Conflict({ error: "The owner keeps their role: transfer ownership to another member instead." })
          }
          if (target === undefined) return yield* memberNotFound
          if (target === role) return
          if (role === "owner") {
            // One owner per team (a unique index): demote first, then promote, both rows already locked.
            yield* repo.setRole(teamId, userId, "admin")
            yield* repo.setRole(teamId, targetId, "owner")
            yield* audit.record(actor, {
              teamId,
              action: "team.ownership_transferred",
              targetType: "user",
              targetId,
              metadata: { from: userId, to: targetId, previousRole: target }
            })
            return
          }
          yield* repo.setRole(teamId, targetId, role)
          yield* audit.record(actor, {
            teamId,
            action: "member.role_changed",
            targetType: "user",
            targetId,
            metadata: { from: target, to: role }
          })
        }))
        return yield* detail(userId, teamId)
      }
    )

    const removeMember = Effect.fn("Teams.removeMember")(function*(actor: AuditActor, userId: string, teamId: string, targetId: string) {
      yield* repo.inTransaction(Effect.gen(function*() {
        const { standing, target } = yield* lockPair(userId, teamId, targetId, "admin")
        if (target === "owner") return yield* new Forbidden({ error: "The owner cannot be removed." })
        if (targetId === userId) return yield* new Conflict({ error: "To leave the team, use POST /teams/{id}/leave." })
        if (target === undefined) return yield* memberNotFound
        if (target === "admin" && standing.role !== "owner") {
          return yield* new Forbidden({ error: "Only the owner may remove an admin." })
        }
        yield* depart(actor, teamId, targetId)
        yield* audit.record(actor, { teamId, action: "member.removed", targetType: "user", targetId, metadata: { role: target } })
      }))
    })

    return Teams.of({
      get,
      detail,
      list: (userId) => repo.listFor(userId),
      createFamily,
      createTeam,
      update,
      remove,
      leave,
      setRole,
      removeMember
    })
  }))

  static readonly layer = Teams.layerNoDeps.pipe(Layer.provide([TeamsRepo.layer, Membership.layer, AuditTrail.layer]))
}
