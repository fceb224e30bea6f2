/**
 * Set-up shared by the invite tests: people with the exact e-mail address a
 * case needs, a team's verified domain written in SQL (the DNS check is the
 * domain tests'), invite rows expired in SQL, the team's audit rows, and the
 * raw accept call for comparing refusal bodies byte for byte.
 */
import type { Scope } from "@herald/api"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { randomBytes } from "node:crypto"
import { Identity } from "../../src/identity/Identity.ts"
import { rawFetch } from "../../../../test/support/server.ts"

export const rw: ReadonlyArray<Scope> = ["teams:read", "teams:write"]

/** A domain no other test uses (verified domains are unique across teams). */
export const uniqueDomain = (label = "d") => `${label}-${randomBytes(5).toString("hex")}.example.test`

/** A person whose e-mail address is exactly `email`, with a Person API session. */
export const personWithEmail = (email: string, name = "invitee") =>
  Effect.gen(function*() {
    const identity = yield* Identity
    const person = yield* identity.createUser({ email, name })
    const session = yield* identity.createSession(person.id)
    return { person, session: session.token }
  }).pipe(Effect.orDie)

/** A person with a fresh address at `domain`. */
export const personAt = (domain: string, label = "p") =>
  personWithEmail(`${label}-${randomBytes(4).toString("hex")}@${domain}`, label)

/** Marks `domain` verified for the team, as a successful DNS check would. */
export const verifyDomain = (teamId: string, domain: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE teams SET verified_domain = ${domain}, domain_verified_at = now() WHERE id = ${teamId}`).pipe(Effect.orDie)

/** Moves an invite's expiry into the past. */
export const expireInvite = (inviteId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE team_invites SET expires_at = now() - interval '1 minute' WHERE id = ${inviteId}`).pipe(Effect.orDie)

export interface AuditRow {
  readonly action: string
  readonly targetType: string | null
  readonly targetId: string | null
  readonly actorUserId: string | null
  readonly actorTokenId: string | null
  readonly metadata: Record<string, unknown> | null
  /** The transaction that wrote the row. */
  readonly xmin: string
}

/** The team's audit rows, oldest first. */
export const auditOf = (teamId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<AuditRow>`SELECT action, target_type, target_id, actor_user_id, actor_token_id, metadata, xmin::text AS xmin
                  FROM team_audit WHERE team_id = ${teamId} ORDER BY created_at, id`).pipe(Effect.orDie)

/** The team's members and their roles. */
export const rolesOf = (teamId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ userId: string; role: string }>`SELECT user_id, role FROM team_members WHERE team_id = ${teamId}`).pipe(
      Effect.map((rows) => new Map(rows.map((row) => [row.userId, row.role]))),
      Effect.orDie
    )

/** POST /api/app/invites/accept as raw HTTP: status and body, to compare refusals exactly. */
export const acceptRaw = (session: string, body: unknown) =>
  rawFetch("/api/app/invites/accept", {
    method: "POST",
    headers: { authorization: `Bearer ${session}`, "content-type": "application/json" },
    body: JSON.stringify(body)
  })

/** "ok", or the error's tag. */
export const outcome = <A, E extends { readonly _tag: string }, R>(call: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.result(call), (result) => result._tag === "Success" ? "ok" : result.failure._tag)
