/**
 * Set-up shared by the on-call group tests: clients and raw calls for a
 * person, the audit entries of on-call changes, a rotation body, and the
 * local date and wall-clock time of an instant as Intl reads them.
 */
import type { CreateOncallGroupRequest, OncallShift } from "@herald/api"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { agentOf } from "../../../../test/support/teams.ts"
import type { Someone } from "../../../../test/support/teams.ts"
import { personClient, rawFetch } from "../../../../test/support/server.ts"

export const scopes = ["oncall:read", "oncall:write", "teams:read", "teams:write"] as const
export const HOUR = 3_600_000
export const DAY = 24 * HOUR

export const iso = (ms: number) => new Date(ms).toISOString()
/** Now, to the second (ISO strings of the API carry milliseconds; whole seconds compare plainly). */
export const nowSeconds = () => Math.floor(Date.now() / 1000) * 1000

export const clientOf = (someone: Someone) => agentOf(someone, [...scopes])

/** A token secret for raw calls: bodies the typed client would refuse to send must meet the server's validation. */
export const secretOf = (someone: Someone) =>
  Effect.flatMap(personClient(someone.session), (app) => app.tokens.create({ payload: { name: "raw", scopes: [...scopes] } })).pipe(
    Effect.map((created) => created.secret),
    Effect.orDie
  )

/** POSTs `body` over the wire; the status and the error code (if any). */
export const post = (secret: string, path: string, body: unknown) =>
  Effect.map(
    rawFetch(`/api/agent${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
      body: JSON.stringify(body)
    }),
    (answer) => ({ status: answer.status, code: (answer.body as { code?: string }).code, error: (answer.body as { error?: string }).error })
  )

export const VALIDATION = { status: 400, code: "VALIDATION_FAILED" }
export const MEMBER_404 = { status: 404, code: "NOT_FOUND", error: "Member not found." }

export const sqlRows = <A extends object>(run: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<A>, unknown>) =>
  Effect.flatMap(SqlClient.SqlClient, run).pipe(Effect.orDie)

type AuditRow = { action: string; actorUserId: string | null; targetType: string; targetId: string; metadata: Record<string, unknown> }
export const auditOf = (teamId: string) =>
  sqlRows((sql) =>
    sql<AuditRow>`SELECT action, actor_user_id, target_type, target_id, metadata FROM team_audit
                  WHERE team_id = ${teamId} AND action LIKE 'oncall.%' ORDER BY created_at, id`)

export const rotationBody = (members: ReadonlyArray<Someone>, over: Partial<CreateOncallGroupRequest["rotation"]> = {}) => ({
  members: members.map((m) => m.person.id),
  period: "daily" as const,
  handoffAt: "09:00",
  timezone: "UTC",
  startsAt: "2026-01-01T09:00:00.000Z",
  ...over
})

export const ownerOf = (shift: OncallShift | null | undefined) => shift?.person.userId

/** The date ("YYYY-MM-DD") and wall-clock time ("HH:MM") of an instant in a zone, as Intl reads them. */
export const local = (ms: number, timeZone: string) => {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", hourCycle: "h23" })
      .formatToParts(ms).map((p) => [p.type, p.value])
  )
  return { date: `${parts.year}-${parts.month}-${parts.day}`, time: `${parts.hour}:${parts.minute}` }
}
export const daysBetween = (from: string, to: string) => Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY)
