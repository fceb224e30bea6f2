/**
 * How much of the database a statement reads, as PostgreSQL counts it: run
 * under EXPLAIN ANALYZE, the rows each plan node produced or read and threw
 * away, over all its loops. A bound on it is a bound on a statement's cost
 * that no clock or machine load can blur.
 */
import { Effect } from "effect"
import type { SqlClient, Statement } from "effect/sql"

interface PlanNode {
  readonly "Actual Rows": number
  readonly "Actual Loops": number
  readonly "Rows Removed by Filter"?: number
  readonly "Rows Removed by Join Filter"?: number
  readonly Plans?: ReadonlyArray<PlanNode>
}

const visited = (node: PlanNode): number =>
  (node["Actual Rows"] + (node["Rows Removed by Filter"] ?? 0) + (node["Rows Removed by Join Filter"] ?? 0)) * node["Actual Loops"] +
  (node.Plans ?? []).reduce((sum, child) => sum + visited(child), 0)

/** Runs `statement` (its writes too) under EXPLAIN ANALYZE; answers the rows its plan visited. */
export const rowsVisited = (sql: SqlClient.SqlClient, statement: Statement.Statement<unknown>) => {
  const [text, params] = statement.compile()
  return Effect.map(sql.unsafe<Record<string, unknown>>(`EXPLAIN (ANALYZE, FORMAT JSON) ${text}`, params), (rows) => {
    // One row, one column ("QUERY PLAN"): the plan as JSON.
    const column = Object.values(rows[0]!)[0]
    const plan = (typeof column === "string" ? JSON.parse(column) : column) as ReadonlyArray<{ readonly Plan: PlanNode }>
    return visited(plan[0]!.Plan)
  })
}
