/**
 * Writing rows of several capabilities in one statement: each capability
 * hands over its INSERT, and they run as data-modifying CTE members beside
 * the caller's own, atomically and in one round trip.
 */
import type { SqlClient, Statement } from "effect/sql"

/** `, w0 AS (…), w1 AS (…)` for the statements, to follow a `WITH x AS (…)`; empty when there are none. */
export const alongsideMembers = (sql: SqlClient.SqlClient, statements: ReadonlyArray<Statement.Statement<unknown>>) =>
  statements.length === 0
    ? sql``
    : sql`, ${sql.join(", ", false)(statements.map((statement, i) => sql`${sql.literal(`w${i}`)} AS (${statement})`))}`
