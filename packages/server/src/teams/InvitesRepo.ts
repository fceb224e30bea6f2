/**
 * SQL of team invites and of joining. Codes are found by their SHA-256 hash
 * only. "Pending" is decided by the database clock (`now()`), as the Team
 * record's seat count decides it, so both always agree on which invites hold
 * a seat. The capacity check and the join run under the team row's lock
 * (`lockTeam`), so two joins cannot both take a family's last seat.
 */
import { INVITES_LISTED, InvitePreview, TeamInvite } from "@herald/api"
import type { TeamKind, TeamRole } from "@herald/api"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"

/** An invite with what acceptance needs beyond the record. */
const InviteState = Schema.Struct({ ...TeamInvite.fields, pending: Schema.Boolean })
export type InviteState = typeof InviteState.Type

/** The team as a join sees it: kind, auto-join setting, and how many seats are taken. */
const TeamSeatsRow = Schema.Struct({
  kind: Schema.Literals(["family", "team"]),
  verifiedDomain: Schema.NullOr(Schema.String),
  autoJoinVerifiedDomain: Schema.Boolean,
  members: Schema.Number,
  pendingInvites: Schema.Number
})
export type TeamSeatsRow = typeof TeamSeatsRow.Type

export interface NewInvite {
  readonly id: string
  readonly teamId: string
  readonly codeHash: string
  readonly email: string | null
  readonly domain: string | null
  readonly role: Exclude<TeamRole, "owner">
  readonly invitedBy: string
}

const columns = (sql: SqlClient.SqlClient) =>
  sql`id, team_id, email, domain, role, invited_by, expires_at, accepted_at, revoked_at, created_at,
      (accepted_at IS NULL AND revoked_at IS NULL AND expires_at > now()) AS pending`

export class InvitesRepo extends Context.Service<InvitesRepo, {
  /** Locks the team row for the rest of the transaction and reads its seats; undefined when it is gone. */
  readonly lockTeam: (teamId: string) => Effect.Effect<(TeamSeatsRow & { readonly kind: TeamKind }) | undefined>
  readonly insert: (invite: NewInvite) => Effect.Effect<InviteState>
  readonly list: (teamId: string) => Effect.Effect<ReadonlyArray<InviteState>>
  /** One invite of the team, its row locked. */
  readonly findLocked: (teamId: string, inviteId: string) => Effect.Effect<InviteState | undefined>
  /** The invite a code belongs to (any team), unlocked: lock the team, then the invite (`findLocked`). */
  readonly findByCode: (codeHash: string) => Effect.Effect<InviteState | undefined>
  /** What a pending invite's code leads to, as `userId` would join it; undefined when the code is not pending. */
  readonly preview: (codeHash: string, userId: string) => Effect.Effect<InvitePreview | undefined>
  readonly revoke: (inviteId: string) => Effect.Effect<InviteState>
  readonly markAccepted: (inviteId: string, userId: string) => Effect.Effect<void>
  /** The person's e-mail address. */
  readonly emailOf: (userId: string) => Effect.Effect<string | undefined>
  readonly isMember: (teamId: string, userId: string) => Effect.Effect<boolean>
  readonly addMember: (teamId: string, userId: string, role: Exclude<TeamRole, "owner">) => Effect.Effect<void>
  readonly inTransaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}>()("herald/InvitesRepo") {
  static readonly layer = Layer.effect(InvitesRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const one = <A>(found: Effect.Effect<Option.Option<A>, unknown>) => found.pipe(Effect.map(Option.getOrUndefined), Effect.orDie)

    // Two statements on purpose: one that waited for the lock still counts with the snapshot it took before
    // waiting (read committed), so it would miss the member the lock holder just added. Counting in a
    // statement that starts after the lock is held sees every join committed before it.
    const lock = (teamId: string) =>
      sql`SELECT id FROM teams WHERE id = ${teamId} FOR UPDATE`.pipe(Effect.map((rows) => rows.length > 0), Effect.orDie)
    const seats = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: TeamSeatsRow,
      execute: (teamId) =>
        sql`SELECT t.kind, t.verified_domain, t.auto_join_verified_domain,
                   (SELECT count(*)::int FROM team_members m WHERE m.team_id = t.id) AS members,
                   (SELECT count(*)::int FROM team_invites i WHERE i.team_id = t.id AND i.accepted_at IS NULL
                      AND i.revoked_at IS NULL AND i.expires_at > now()) AS pending_invites
            FROM teams t WHERE t.id = ${teamId}`
    })
    const insert = SqlSchema.findOne({
      Request: Schema.Struct({
        id: Schema.String,
        teamId: Schema.String,
        codeHash: Schema.String,
        email: Schema.NullOr(Schema.String),
        domain: Schema.NullOr(Schema.String),
        role: Schema.String,
        invitedBy: Schema.String
      }),
      Result: InviteState,
      execute: (i) =>
        sql`INSERT INTO team_invites (id, team_id, code_hash, email, domain, role, invited_by, expires_at)
            VALUES (${i.id}, ${i.teamId}, ${i.codeHash}, ${i.email}, ${i.domain}, ${i.role}, ${i.invitedBy},
                    now() + interval '7 days')
            RETURNING ${columns(sql)}`
    })
    const list = SqlSchema.findAll({
      Request: Schema.String,
      Result: InviteState,
      execute: (teamId) =>
        sql`SELECT ${columns(sql)} FROM team_invites WHERE team_id = ${teamId} ORDER BY id DESC LIMIT ${INVITES_LISTED}`
    })
    const findLocked = SqlSchema.findOneOption({
      Request: Schema.Struct({ teamId: Schema.String, inviteId: Schema.String }),
      Result: InviteState,
      execute: ({ inviteId, teamId }) =>
        sql`SELECT ${columns(sql)} FROM team_invites WHERE id = ${inviteId} AND team_id = ${teamId} FOR UPDATE`
    })
    const findByCode = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: InviteState,
      execute: (codeHash) => sql`SELECT ${columns(sql)} FROM team_invites WHERE code_hash = ${codeHash}`
    })
    const preview = SqlSchema.findOneOption({
      Request: Schema.Struct({ codeHash: Schema.String, userId: Schema.String }),
      Result: InvitePreview,
      execute: ({ codeHash, userId }) =>
        sql`SELECT t.name AS team_name, t.kind, i.role, COALESCE(u.name, '') AS invited_by, i.expires_at, i.email, i.domain,
                   EXISTS (SELECT 1 FROM team_members m WHERE m.team_id = i.team_id AND m.user_id = ${userId}) AS already_member
            FROM team_invites i
            JOIN teams t ON t.id = i.team_id
            LEFT JOIN users u ON u.id = i.invited_by
            WHERE i.code_hash = ${codeHash} AND i.accepted_at IS NULL AND i.revoked_at IS NULL AND i.expires_at > now()`
    })
    const revoke = SqlSchema.findOne({
      Request: Schema.String,
      Result: InviteState,
      execute: (inviteId) =>
        sql`UPDATE team_invites SET revoked_at = coalesce(revoked_at, now()) WHERE id = ${inviteId} RETURNING ${columns(sql)}`
    })
    const emailOf = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: Schema.Struct({ email: Schema.String }),
      execute: (userId) => sql`SELECT email FROM users WHERE id = ${userId}`
    })

    return InvitesRepo.of({
      lockTeam: (teamId) => Effect.flatMap(lock(teamId), (found) => found ? one(seats(teamId)) : Effect.succeed(undefined)),
      insert: (invite) => Effect.orDie(insert(invite)),
      list: (teamId) => Effect.orDie(list(teamId)),
      findLocked: (teamId, inviteId) => one(findLocked({ teamId, inviteId })),
      findByCode: (codeHash) => one(findByCode(codeHash)),
      preview: (codeHash, userId) => one(preview({ codeHash, userId })),
      revoke: (inviteId) => Effect.orDie(revoke(inviteId)),
      markAccepted: (inviteId, userId) =>
        sql`UPDATE team_invites SET accepted_at = now(), accepted_by = ${userId} WHERE id = ${inviteId}`.pipe(Effect.asVoid, Effect.orDie),
      emailOf: (userId) => Effect.map(one(emailOf(userId)), (row) => row?.email),
      isMember: (teamId, userId) =>
        sql`SELECT 1 FROM team_members WHERE team_id = ${teamId} AND user_id = ${userId}`.pipe(
          Effect.map((rows) => rows.length > 0),
          Effect.orDie
        ),
      addMember: (teamId, userId, role) =>
        sql`INSERT INTO team_members (team_id, user_id, role) VALUES (${teamId}, ${userId}, ${role})`.pipe(Effect.asVoid, Effect.orDie),
      inTransaction: (effect) => sql.withTransaction(effect).pipe(Effect.catchTag("SqlError", Effect.die))
    })
  }))
}
