/**
 * The audit log as CSV text (RFC 4180): columns are AuditLogEntry's fields in
 * spec order, lines end in CRLF, a null is an empty cell, `metadata` is its
 * JSON text.
 *
 * decisions.md: a cell starting with `=`, `+`, `-`, `@`, tab or carriage
 * return is prefixed with `'`, so a spreadsheet opening the file shows it as
 * text instead of running it as a formula (CSV injection). Every cell gets the
 * same treatment: names, user agents and metadata are all chosen by someone.
 */
import type { AuditLogEntry } from "@herald/api"

/** The header row's names, which are also the order of every row's cells. */
export const AUDIT_CSV_COLUMNS = [
  "id",
  "teamId",
  "actorUserId",
  "actorName",
  "actorTokenId",
  "action",
  "targetType",
  "targetId",
  "metadata",
  "ip",
  "userAgent",
  "createdAt"
] as const satisfies ReadonlyArray<keyof AuditLogEntry>

const FORMULA_START = /^[=+\-@\t\r]/
const NEEDS_QUOTES = /[",\r\n]/

/** One cell: the formula guard first, then RFC 4180 quoting (quotes doubled) when the text needs it. */
export const csvCell = (value: string | null): string => {
  if (value === null) return ""
  const guarded = FORMULA_START.test(value) ? `'${value}` : value
  return NEEDS_QUOTES.test(guarded) ? `"${guarded.replaceAll("\"", "\"\"")}"` : guarded
}

const CRLF = "\r\n"

/** The header line. */
export const csvHeader = AUDIT_CSV_COLUMNS.join(",") + CRLF

/** One entry's line. */
export const csvLine = (entry: AuditLogEntry): string =>
  AUDIT_CSV_COLUMNS.map((column) => {
    const value = entry[column]
    return csvCell(column === "metadata" ? (value === null ? null : JSON.stringify(value)) : value as string | null)
  }).join(",") + CRLF
