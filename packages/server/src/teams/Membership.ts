/**
 * Who may do what in a team: the caller's role, and the one gate every team
 * route passes. decisions.md: a non-member gets 404 for the team and
 * everything under it (the team's existence is not disclosed); a member
 * lacking the role gets 403 `FORBIDDEN`.
 *
 * `forUpdate` locks the membership row for the rest of the caller's
 * transaction, so a role check and the change it guards see the same role
 * (an owner transferring ownership while an admin acts, a member removed
 * mid-request).
 */
import { Forbidden, NotFound } from "@herald/api"
import type { TeamKind, TeamRole } from "@herald/api"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"

const rank: Record<TeamRole, number> = { member: 0, admin: 1, owner: 2 }

/** Whether `role` is at least `least`. */
export const atLeast = (role: TeamRole, least: TeamRole): boolean => rank[role] >= rank[least]

/** The caller's standing in one team. */
export interface Standing {
  readonly teamId: string
  readonly kind: TeamKind
  readonly role: TeamRole
}

const StandingRow = Schema.Struct({
  teamId: Schema.String,
  kind: Schema.Literals(["family", "team"]),
  role: Schema.Literals(["owner", "admin", "member"])
})

export const teamNotFound = new NotFound({ error: "Team not found." })

const roleNames: Record<TeamRole, string> = { member: "a member", admin: "an admin or the owner", owner: "the owner" }

export class Membership extends Context.Service<Membership, {
  /** The caller's standing in the team; undefined when not a member (or no such team). */
  readonly standing: (userId: string, teamId: string, options?: { readonly forUpdate?: boolean }) => Effect.Effect<Standing | undefined>
  /**
   * The caller's standing when their role is at least `least`: 404 for a non-member, 403 `FORBIDDEN`
   * for a member below it. Inside a transaction, `forUpdate` holds the membership row until it ends.
   */
  readonly require: (
    userId: string,
    teamId: string,
    least: TeamRole,
    options?: { readonly forUpdate?: boolean }
  ) => Effect.Effect<Standing, NotFound | Forbidden>
}>()("herald/Membership") {
  static readonly layer = Layer.effect(Membership, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const find = SqlSchema.findOneOption({
      Request: Schema.Struct({ userId: Schema.String, teamId: Schema.String, forUpdate: Schema.Boolean }),
      Result: StandingRow,
      execute: ({ forUpdate, teamId, userId }) =>
        sql`SELECT m.team_id, t.kind, m.role FROM team_members m JOIN teams t ON t.id = m.team_id
            WHERE m.team_id = ${teamId} AND m.user_id = ${userId}${forUpdate ? sql` FOR UPDATE OF m` : sql``}`
    })
    const standing = (userId: string, teamId: string, options?: { readonly forUpdate?: boolean }) =>
      find({ userId, teamId, forUpdate: options?.forUpdate === true }).pipe(Effect.map(Option.getOrUndefined), Effect.orDie)
    return Membership.of({
      standing,
      require: (userId, teamId, least, options) =>
        Effect.flatMap(standing(userId, teamId, options), (found): Effect.Effect<Standing, NotFound | Forbidden> =>
          found === undefined
            ? Effect.fail(teamNotFound)
            : atLeast(found.role, least)
            ? Effect.succeed(found)
            : Effect.fail(new Forbidden({ error: `Only ${roleNames[least]} of the team may do this.` })))
    })
  }))
}
