/**
 * Reading a team's audit log (spec "Teams and families": GET /teams/{id}/audit;
 * query from decisions.md). One endpoint answers two content types: a JSON
 * page (AuditLogPage) or, with `format=csv`, a streamed CSV file.
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { Timestamp } from "../domain/Common.ts"
import { AuditLogPage } from "../domain/Teams.ts"
import { BadRequest, Forbidden, NotFound } from "../errors.ts"
import { agentOperation } from "../Operation.ts"
import { TeamId } from "../Params.ts"
import { AgentAuth } from "../Security.ts"
import { IntParam } from "./History.ts"

/** Rows one CSV response holds at most (spec Limits "Audit CSV"); `X-Audit-Truncated: true` says more exist. */
export const AUDIT_CSV_MAX_ROWS = 50_000

/** Query of GET /teams/{id}/audit. */
export const AuditLogQuery = Schema.Struct({
  from: Schema.optionalKey(Timestamp),
  to: Schema.optionalKey(Timestamp),
  action: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(100))),
  limit: Schema.optionalKey(IntParam(1, 200)),
  cursor: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1), Schema.isMaxLength(512))),
  format: Schema.optionalKey(Schema.Literals(["json", "csv"]))
}).annotate({ identifier: "AuditLogQuery" })
export type AuditLogQuery = typeof AuditLogQuery.Type

/** The CSV form of the log: a header row, then one row per entry (the typed client reads it as text). */
export const AuditLogCsv = Schema.String.pipe(HttpApiSchema.asText({ contentType: "text/csv" })).annotate({
  identifier: "AuditLogCsv",
  description: "RFC 4180 CSV (`text/csv; charset=utf-8`): a header row, then one row per entry, newest first."
})

export class AuditGroup extends HttpApiGroup.make("audit")
  .add(
    HttpApiEndpoint.get("list", "/teams/:id/audit", {
      params: { id: TeamId },
      query: AuditLogQuery,
      success: [AuditLogPage, AuditLogCsv],
      error: [BadRequest, Forbidden, NotFound]
    }).pipe(agentOperation({
      summary: "Read a team's audit log",
      description: "The team's audit entries, newest first (`createdAt`, then `id`, descending). Admins and the owner " +
        "may read it; a member gets 403 `FORBIDDEN`, a non-member 404. Filters: `from` (ISO date-time, inclusive: an " +
        "entry at exactly `from` is listed), `to` (ISO date-time, exclusive), `action` (exact, e.g. `member.removed`).\n\n" +
        "JSON (default): an AuditLogPage of `limit` 1–200 entries (default 50); pass `nextCursor` back as `cursor` for " +
        "the next page (null at the end). A cursor is opaque and signed: an altered one, or one used with other " +
        "filters (`from`, `to`, `action`) or another team than it was made for, answers 400 `BAD_REQUEST` (`limit` may " +
        "change).\n\n" +
        "`format=csv`: `text/csv; charset=utf-8`, streamed; `limit` and `cursor` do not apply. A header row, then the " +
        "entry's fields in spec order (id, teamId, actorUserId, actorName, actorTokenId, action, targetType, targetId, " +
        "metadata as JSON text, ip, userAgent, createdAt); null is an empty cell; RFC 4180 quoting. A cell starting " +
        "with `=`, `+`, `-`, `@`, tab or carriage return is prefixed with `'` so spreadsheets do not run it as a " +
        "formula. At most 50,000 rows per response: when more match, the response carries `X-Audit-Truncated: true`; " +
        "fetch the rest with the same filters and `to` set to the last row's `createdAt` (entries sharing that exact " +
        "instant with the last row appear again and can be dropped by `id`).",
      scopes: ["teams:read"]
    }))
  )
  .middleware(AgentAuth)
{}
