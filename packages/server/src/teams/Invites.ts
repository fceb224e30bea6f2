/**
 * Team invites and joining (decisions.md "Invites", "Family capacity",
 * "Roles"): a 7-day code of 128 random bits, stored hashed and shown once;
 * only the owner invites admins, admins invite members; a family's accepted
 * members plus pending invites never pass four. Every change runs in one
 * transaction with its audit entry, under the team row's lock, so a seat is
 * counted and taken in one step.
 *
 * Lock order, as in Teams.ts: the caller's member row (the role gate), then
 * the team row, then the invite.
 */
import { BadRequest, Conflict, Forbidden, LimitReached, NotFound, TeamInvite, TeamInviteCreated } from "@herald/api"
import type { InvitePreview } from "@herald/api"
import type { AcceptInviteRequest, CreateInviteRequest, Team, TeamRole } from "@herald/api"
import { Context, Effect, Layer } from "effect"
import { randomBytes } from "node:crypto"
import { hashSecret } from "../auth/Secrets.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { FAMILY_SEATS, MAX_PENDING_INVITES, MAX_TEAM_MEMBERS } from "../config/Limits.ts"
import { makeId } from "../lib/Ids.ts"
import type { AuditActor } from "./AuditTrail.ts"
import { AuditTrail } from "./AuditTrail.ts"
import { InvitesRepo } from "./InvitesRepo.ts"
import type { InviteState, TeamSeatsRow } from "./InvitesRepo.ts"
import { Membership, teamNotFound } from "./Membership.ts"
import { Teams } from "./Teams.ts"

// One answer for an unknown, accepted, revoked or expired code: the caller learns nothing about which.
const codeInvalid = new NotFound({ error: "Invite not found, or no longer valid." })
const inviteNotFound = new NotFound({ error: "Invite not found." })
const familyFull = new LimitReached({
  error: `A family holds its owner and ${FAMILY_SEATS - 1} more; members and pending invites fill every seat.`,
  limit: FAMILY_SEATS
})

const toInvite = ({ pending: _, ...row }: InviteState) => new TeamInvite(row)

/** Whether one more person may take a seat: members + pending invites (`held` of them the joiner's own). */
const roomFor = (team: TeamSeatsRow, held: 0 | 1): LimitReached | undefined => {
  if (team.kind === "family") return team.members + team.pendingInvites - held + 1 > FAMILY_SEATS ? familyFull : undefined
  return team.members >= MAX_TEAM_MEMBERS
    ? new LimitReached({ error: `A team has at most ${MAX_TEAM_MEMBERS} members.`, limit: MAX_TEAM_MEMBERS })
    : undefined
}

const domainOf = (email: string) => email.slice(email.lastIndexOf("@") + 1).toLowerCase()

export class Invites extends Context.Service<Invites, {
  readonly list: (userId: string, teamId: string) => Effect.Effect<ReadonlyArray<TeamInvite>, NotFound | Forbidden>
  readonly create: (
    actor: AuditActor,
    userId: string,
    teamId: string,
    input: CreateInviteRequest
  ) => Effect.Effect<TeamInviteCreated, NotFound | Forbidden | BadRequest | LimitReached>
  readonly revoke: (
    actor: AuditActor,
    userId: string,
    teamId: string,
    inviteId: string
  ) => Effect.Effect<TeamInvite, NotFound | Forbidden | Conflict>
  /** The signed-in person joins by a code or, with `teamId`, through the team's verified domain. */
  readonly accept: (
    actor: AuditActor,
    userId: string,
    input: AcceptInviteRequest
  ) => Effect.Effect<Team, BadRequest | Forbidden | NotFound | Conflict | LimitReached>
  /** What a code leads to, before accepting it (the join page); 404 as accepting would for a code no longer valid. */
  readonly preview: (userId: string, code: string) => Effect.Effect<InvitePreview, NotFound>
}>()("herald/Invites") {
  static readonly layerNoDeps = Layer.effect(Invites, Effect.gen(function*() {
    const repo = yield* InvitesRepo
    const membership = yield* Membership
    const audit = yield* AuditTrail
    const teams = yield* Teams
    const { publicUrl } = yield* AppConfig

    const list = Effect.fn("Invites.list")(function*(userId: string, teamId: string) {
      yield* membership.require(userId, teamId, "admin")
      return (yield* repo.list(teamId)).map(toInvite)
    })

    const create = Effect.fn("Invites.create")(function*(actor: AuditActor, userId: string, teamId: string, input: CreateInviteRequest) {
      if ((input.email === undefined) === (input.domain === undefined)) {
        return yield* new BadRequest({ error: "Give exactly one of `email` or `domain`." })
      }
      const role = input.role ?? "member"
      // decisions.md: only the owner invites (or promotes) admins; admins invite members.
      const least: TeamRole = role === "admin" ? "owner" : "admin"
      const code = randomBytes(16).toString("base64url")
      const id = yield* makeId("inv")
      const row = yield* repo.inTransaction(Effect.gen(function*() {
        yield* membership.require(userId, teamId, least, { forUpdate: true })
        const team = yield* repo.lockTeam(teamId)
        if (team === undefined) return yield* teamNotFound
        if (team.kind === "family") {
          if (team.members + team.pendingInvites >= FAMILY_SEATS) return yield* familyFull
        } else if (team.pendingInvites >= MAX_PENDING_INVITES) {
          return yield* new LimitReached({ error: `A team keeps at most ${MAX_PENDING_INVITES} pending invites.`, limit: MAX_PENDING_INVITES })
        }
        const invite = yield* repo.insert({
          id,
          teamId,
          codeHash: hashSecret(code),
          email: input.email?.toLowerCase() ?? null,
          domain: input.domain?.toLowerCase() ?? null,
          role,
          invitedBy: userId
        })
        yield* audit.record(actor, {
          teamId,
          action: "invite.created",
          targetType: "invite",
          targetId: id,
          metadata: { email: invite.email, domain: invite.domain, role }
        })
        return invite
      }))
      return new TeamInviteCreated({ invite: toInvite(row), code, url: `${publicUrl}/join/${code}` })
    })

    const revoke = Effect.fn("Invites.revoke")(function*(actor: AuditActor, userId: string, teamId: string, inviteId: string) {
      return yield* repo.inTransaction(Effect.gen(function*() {
        const standing = yield* membership.require(userId, teamId, "admin", { forUpdate: true })
        // The team row before the invite, as an accept takes them (the other order deadlocks against it).
        if ((yield* repo.lockTeam(teamId)) === undefined) return yield* teamNotFound
        const invite = yield* repo.findLocked(teamId, inviteId)
        if (invite === undefined) return yield* inviteNotFound
        if (invite.role === "admin" && standing.role !== "owner") {
          return yield* new Forbidden({ error: "Only the owner may revoke an admin invite." })
        }
        if (invite.acceptedAt !== null) return yield* new Conflict({ error: "The invite was accepted; remove the member instead." })
        if (invite.revokedAt !== null) return toInvite(invite)
        const revoked = yield* repo.revoke(inviteId)
        yield* audit.record(actor, { teamId, action: "invite.revoked", targetType: "invite", targetId: inviteId, metadata: null })
        return toInvite(revoked)
      }))
    })

    /** Joins `userId` to the locked `teamId` in `role`: the member row and its audit entry. */
    const join = (actor: AuditActor, teamId: string, userId: string, role: Exclude<TeamRole, "owner">, via: Record<string, unknown>) =>
      Effect.gen(function*() {
        yield* repo.addMember(teamId, userId, role)
        yield* audit.record(actor, { teamId, action: "member.joined", targetType: "user", targetId: userId, metadata: { role, ...via } })
      })

    const byCode = (actor: AuditActor, userId: string, code: string) =>
      repo.inTransaction(Effect.gen(function*() {
        // Unlocked first, to learn the team; then team row, then the invite again (the lock order).
        const found = yield* repo.findByCode(hashSecret(code))
        if (found === undefined || !found.pending) return yield* codeInvalid
        const team = yield* repo.lockTeam(found.teamId)
        const invite = yield* repo.findLocked(found.teamId, found.id)
        if (team === undefined || invite === undefined || !invite.pending) return yield* codeInvalid
        const email = (yield* repo.emailOf(userId)) ?? ""
        if (invite.email !== null && invite.email !== email.toLowerCase()) {
          return yield* new Forbidden({ error: "This invite is for another e-mail address." })
        }
        if (invite.domain !== null && invite.domain !== domainOf(email)) {
          return yield* new Forbidden({ error: `This invite is for e-mail addresses at ${invite.domain}.` })
        }
        if (yield* repo.isMember(invite.teamId, userId)) return yield* new Conflict({ error: "Already a member of this team." })
        // The invite's own pending seat becomes the member's.
        const full = roomFor(team, 1)
        if (full !== undefined) return yield* full
        yield* repo.markAccepted(invite.id, userId)
        yield* audit.record(actor, { teamId: invite.teamId, action: "invite.accepted", targetType: "invite", targetId: invite.id, metadata: null })
        yield* join(actor, invite.teamId, userId, invite.role as Exclude<TeamRole, "owner">, { inviteId: invite.id })
        return invite.teamId
      }))

    const byDomain = (actor: AuditActor, userId: string, teamId: string) =>
      repo.inTransaction(Effect.gen(function*() {
        const team = yield* repo.lockTeam(teamId)
        const email = (yield* repo.emailOf(userId)) ?? ""
        // A team the person cannot join this way is not disclosed.
        if (team === undefined || !team.autoJoinVerifiedDomain || team.verifiedDomain === null) return yield* teamNotFound
        if (team.verifiedDomain.toLowerCase() !== domainOf(email)) return yield* teamNotFound
        if (yield* repo.isMember(teamId, userId)) return yield* new Conflict({ error: "Already a member of this team." })
        const full = roomFor(team, 0)
        if (full !== undefined) return yield* full
        yield* join(actor, teamId, userId, "member", { via: "verified_domain" })
        return teamId
      }))

    const accept = Effect.fn("Invites.accept")(function*(actor: AuditActor, userId: string, input: AcceptInviteRequest) {
      if ((input.code === undefined) === (input.teamId === undefined)) {
        return yield* new BadRequest({ error: "Give exactly one of `code` or `teamId`." })
      }
      const teamId = input.code !== undefined ? yield* byCode(actor, userId, input.code) : yield* byDomain(actor, userId, input.teamId!)
      return yield* Effect.orDie(teams.get(userId, teamId))
    })

    const preview = Effect.fn("Invites.preview")(function*(userId: string, code: string) {
      const found = yield* repo.preview(hashSecret(code), userId)
      if (found === undefined) return yield* codeInvalid
      return found
    })

    return Invites.of({ list, create, revoke, accept, preview })
  }))

  static readonly layer = Invites.layerNoDeps.pipe(
    Layer.provide([InvitesRepo.layer, Membership.layer, AuditTrail.layer, Teams.layer, AppConfig.layer])
  )
}
