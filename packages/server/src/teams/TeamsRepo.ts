/**
 * SQL of teams and families and their members. A team is always read as one
 * member sees it: the caller's role joins the read, and every count (members,
 * apps, device groups, seats) is computed in the same statement, so the record
 * is true at every read rather than kept in counters that drift.
 *
 * Writes by id follow a locked `Membership.require` in the same transaction
 * (the service decides who may write); this file holds no rules.
 */
import { DomainVerification, Team, TeamMember, TeamRole, TeamSeats } from "@herald/api"
import type { TeamKind, TeamPlan } from "@herald/api"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { countLocked, LockSpace } from "../db/AccountLocks.ts"
import { FAMILY_SEATS } from "../config/Limits.ts"

/** A team's columns and counts as one member sees them, before the record is shaped. */
const TeamRow = Schema.Struct({
  id: Schema.String,
  kind: Schema.Literals(["family", "team"]),
  plan: Schema.Literals(["free", "team"]),
  name: Schema.String,
  role: TeamRole,
  memberCount: Schema.Number,
  appCount: Schema.Number,
  deviceGroupCount: Schema.Number,
  oncallGroupCount: Schema.Number,
  pendingInvites: Schema.Number,
  verifiedDomain: Schema.NullOr(Schema.String),
  pendingDomain: Schema.NullOr(Schema.String),
  domainToken: Schema.NullOr(Schema.String),
  autoJoinVerifiedDomain: Schema.Boolean,
  retentionDays: Schema.NullOr(Schema.Number),
  createdAt: Schema.String
})
type TeamRow = typeof TeamRow.Type

/**
 * decisions.md: used = accepted members + pending unexpired invites; a family has 4 − used left and
 * bills nothing, a team has no cap and bills what it uses.
 */
const seatsOf = (row: TeamRow): TeamSeats => {
  const used = row.memberCount + row.pendingInvites
  return row.kind === "family"
    ? new TeamSeats({ used, available: Math.max(0, FAMILY_SEATS - used), billable: 0 })
    : new TeamSeats({ used, available: null, billable: used })
}

const toTeam = (row: TeamRow): Team => {
  const { domainToken, pendingInvites: _, ...fields } = row
  return new Team({
    ...fields,
    seats: seatsOf(row),
    // The DNS challenge is the owner's alone, and only while a domain waits for verification.
    domainVerification: row.role === "owner" && row.pendingDomain !== null && domainToken !== null
      ? new DomainVerification({
        host: `_herald-verification.${row.pendingDomain}`,
        value: `herald-verify=${domainToken}`
      })
      : null
  })
}

export interface NewTeam {
  readonly id: string
  readonly kind: TeamKind
  readonly plan: TeamPlan
  readonly name: string
  readonly ownerId: string
}

export interface TeamPatch {
  readonly name?: string
  readonly autoJoinVerifiedDomain?: boolean
  readonly retentionDays?: number | null
}

const Ids = Schema.Array(Schema.Struct({ id: Schema.String }))

export class TeamsRepo extends Context.Service<TeamsRepo, {
  /** The team as `userId` sees it; undefined when not a member (or no such team). */
  readonly find: (userId: string, teamId: string) => Effect.Effect<Team | undefined>
  /** Teams the user belongs to, newest first. */
  readonly listFor: (userId: string) => Effect.Effect<ReadonlyArray<Team>>
  /** The team's members, owner first, then by joining. */
  readonly members: (teamId: string) => Effect.Effect<ReadonlyArray<TeamMember>>
  /**
   * How many teams of `kind` the user belongs to, counted under the user's lock (held to the end of
   * the caller's transaction), so two concurrent creates count one after the other.
   */
  readonly countLocked: (userId: string, kind: TeamKind) => Effect.Effect<number>
  /** Inserts the team and its owner's membership (inside the caller's transaction). */
  readonly insert: (team: NewTeam) => Effect.Effect<void>
  readonly update: (teamId: string, patch: TeamPatch) => Effect.Effect<void>
  /** Deletes the team: its apps and shared services fall back to their creators by foreign key. */
  readonly remove: (teamId: string) => Effect.Effect<void>
  /**
   * Locks the members' rows (all of the team's when `userIds` is undefined) in `user_id` order, to the
   * end of the caller's transaction; their roles by user (a non-member is absent).
   */
  readonly lockMembers: (teamId: string, userIds: ReadonlyArray<string> | undefined) => Effect.Effect<ReadonlyMap<string, TeamRole>>
  readonly setRole: (teamId: string, userId: string, role: TeamRole) => Effect.Effect<void>
  readonly removeMember: (teamId: string, userId: string) => Effect.Effect<void>
  /** Unshares the user's services shared with the team; the ids unshared. */
  readonly unshareServices: (teamId: string, userId: string) => Effect.Effect<ReadonlyArray<string>>
  /** Moves the apps the user shared to the team back to them; the ids moved. */
  readonly unshareApps: (teamId: string, userId: string) => Effect.Effect<ReadonlyArray<string>>
  /** Runs `effect` in one transaction (a change, its checks and its audit entries). */
  readonly inTransaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}>()("herald/TeamsRepo") {
  static readonly layer = Layer.effect(TeamsRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    // One member's view of teams: the caller's membership row picks the teams and gives the role.
    const select = (userId: string) =>
      sql`SELECT t.id, t.kind, t.plan, t.name, m.role, t.verified_domain, t.pending_domain, t.domain_token,
                 t.auto_join_verified_domain, t.retention_days, t.created_at,
                 (SELECT count(*)::int FROM team_members x WHERE x.team_id = t.id) AS member_count,
                 (SELECT count(*)::int FROM apps a WHERE a.team_id = t.id) AS app_count,
                 (SELECT count(*)::int FROM device_groups g WHERE g.team_id = t.id) AS device_group_count,
                 (SELECT count(*)::int FROM oncall_groups g WHERE g.team_id = t.id) AS oncall_group_count,
                 (SELECT count(*)::int FROM team_invites i
                  WHERE i.team_id = t.id AND i.accepted_at IS NULL AND i.revoked_at IS NULL AND i.expires_at > now())
                   AS pending_invites
          FROM teams t JOIN team_members m ON m.team_id = t.id AND m.user_id = ${userId}`

    const find = SqlSchema.findOneOption({
      Request: Schema.Struct({ userId: Schema.String, teamId: Schema.String }),
      Result: TeamRow,
      execute: ({ teamId, userId }) => sql`${select(userId)} WHERE t.id = ${teamId}`
    })
    const listFor = SqlSchema.findAll({
      Request: Schema.String,
      Result: TeamRow,
      execute: (userId) => sql`${select(userId)} ORDER BY t.created_at DESC, t.id DESC`
    })
    const members = SqlSchema.findAll({
      Request: Schema.String,
      Result: TeamMember,
      execute: (teamId) =>
        sql`SELECT m.user_id, u.name, u.email, NULL::text AS image, m.role, m.joined_at
            FROM team_members m JOIN users u ON u.id = m.user_id
            WHERE m.team_id = ${teamId}
            ORDER BY (m.role = 'owner') DESC, m.joined_at, m.user_id`
    })
    // One order for every locker of several member rows, so two of them never wait on each other.
    const lockMembers = SqlSchema.findAll({
      Request: Schema.Struct({ teamId: Schema.String, userIds: Schema.NullOr(Schema.Array(Schema.String)) }),
      Result: Schema.Struct({ userId: Schema.String, role: TeamRole }),
      execute: ({ teamId, userIds }) =>
        sql`SELECT user_id, role FROM team_members
            WHERE team_id = ${teamId}${userIds === null ? sql`` : sql` AND user_id IN ${sql.in(userIds)}`}
            ORDER BY user_id FOR UPDATE`
    })
    const unshareServices = SqlSchema.findAll({
      Request: Schema.Struct({ teamId: Schema.String, userId: Schema.String }),
      Result: Schema.Struct({ id: Schema.String }),
      execute: ({ teamId, userId }) =>
        sql`UPDATE services SET family_id = NULL, updated_at = now()
            WHERE user_id = ${userId} AND family_id = ${teamId} RETURNING id`
    })
    const unshareApps = SqlSchema.findAll({
      Request: Schema.Struct({ teamId: Schema.String, userId: Schema.String }),
      Result: Schema.Struct({ id: Schema.String }),
      execute: ({ teamId, userId }) =>
        sql`UPDATE apps SET team_id = NULL, updated_at = now()
            WHERE user_id = ${userId} AND team_id = ${teamId} RETURNING id`
    })
    const ids = (rows: typeof Ids.Type) => rows.map((row) => row.id)

    return TeamsRepo.of({
      find: (userId, teamId) =>
        find({ userId, teamId }).pipe(Effect.map(Option.map(toTeam)), Effect.map(Option.getOrUndefined), Effect.orDie),
      listFor: (userId) => listFor(userId).pipe(Effect.map((rows) => rows.map(toTeam)), Effect.orDie),
      members: (teamId) => members(teamId).pipe(Effect.orDie),
      countLocked: (userId, kind) =>
        countLocked(sql, LockSpace.families, userId, sql`SELECT count(*)::int AS n FROM team_members m JOIN teams t ON t.id = m.team_id
                                                         WHERE m.user_id = ${userId} AND t.kind = ${kind}`),
      insert: (team) =>
        Effect.all([
          sql`INSERT INTO teams (id, kind, plan, name) VALUES (${team.id}, ${team.kind}, ${team.plan}, ${team.name})`,
          sql`INSERT INTO team_members (team_id, user_id, role) VALUES (${team.id}, ${team.ownerId}, 'owner')`
        ], { discard: true }).pipe(Effect.orDie),
      update: (teamId, patch) => {
        const changes = {
          ...(patch.name === undefined ? {} : { name: patch.name }),
          ...(patch.autoJoinVerifiedDomain === undefined ? {} : { autoJoinVerifiedDomain: patch.autoJoinVerifiedDomain }),
          ...(patch.retentionDays === undefined ? {} : { retentionDays: patch.retentionDays })
        }
        const set = Object.keys(changes).length > 0 ? sql`${sql.update(changes)}, updated_at = now()` : sql`updated_at = now()`
        return sql`UPDATE teams SET ${set} WHERE id = ${teamId}`.pipe(Effect.asVoid, Effect.orDie)
      },
      remove: (teamId) => sql`DELETE FROM teams WHERE id = ${teamId}`.pipe(Effect.asVoid, Effect.orDie),
      lockMembers: (teamId, userIds) =>
        lockMembers({ teamId, userIds: userIds ?? null }).pipe(
          Effect.map((rows) => new Map(rows.map((row) => [row.userId, row.role]))),
          Effect.orDie
        ),
      setRole: (teamId, userId, role) =>
        sql`UPDATE team_members SET role = ${role} WHERE team_id = ${teamId} AND user_id = ${userId}`.pipe(
          Effect.asVoid,
          Effect.orDie
        ),
      removeMember: (teamId, userId) =>
        sql`DELETE FROM team_members WHERE team_id = ${teamId} AND user_id = ${userId}`.pipe(Effect.asVoid, Effect.orDie),
      unshareServices: (teamId, userId) => unshareServices({ teamId, userId }).pipe(Effect.map(ids), Effect.orDie),
      unshareApps: (teamId, userId) => unshareApps({ teamId, userId }).pipe(Effect.map(ids), Effect.orDie),
      inTransaction: (effect) => sql.withTransaction(effect).pipe(Effect.catchTag("SqlError", Effect.die))
    })
  }))
}

