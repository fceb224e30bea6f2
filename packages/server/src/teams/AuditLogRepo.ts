/**
 * SQL of reading and sweeping the team audit log (writing is AuditTrail.ts).
 *
 * Order is newest first by (created_at, id), served by the index
 * `team_audit_team_idx (team_id, created_at DESC, id DESC)`. Pages are keyset:
 * each row carries `at`, its `created_at` in whole microseconds since the
 * epoch, so a boundary is exact (the API's `createdAt` shows milliseconds, and
 * two entries may share one). Times cross as text and are cast in SQL, so an
 * ISO `from`/`to` keeps any sub-millisecond part it has.
 */
import { AuditLogEntry } from "@herald/api"
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"

/** Which entries of a team: `from` inclusive, `to` exclusive, `action` exact. */
export interface AuditFilter {
  readonly teamId: string
  readonly from: string | undefined
  readonly to: string | undefined
  readonly action: string | undefined
}

/** A keyset boundary: the next rows are strictly below (`at` µs since the epoch, `id`). */
export interface AuditKey {
  readonly at: string
  readonly id: string
}

const AuditRow = Schema.Struct({ ...AuditLogEntry.fields, at: Schema.String })
export type AuditRow = typeof AuditRow.Type

export class AuditLogRepo extends Context.Service<AuditLogRepo, {
  /** Up to `limit` entries matching `filter` below `after` (from the top when null), newest first. */
  readonly page: (filter: AuditFilter, after: AuditKey | null, limit: number) => Effect.Effect<ReadonlyArray<AuditRow>>
  /** How many entries match `filter`, counting no further than `atMost`. */
  readonly countUpTo: (filter: AuditFilter, atMost: number) => Effect.Effect<number>
  /** Teams that keep their audit log a limited time. */
  readonly teamsWithRetention: Effect.Effect<ReadonlyArray<{ readonly id: string; readonly retentionDays: number }>>
  /** Deletes up to `batch` of the team's entries created before `before` (ISO); how many went. */
  readonly deleteOlder: (teamId: string, before: string, batch: number) => Effect.Effect<number>
  /** Deletes up to `batch` of the team's resolved pages resolved before `before` (ISO); how many went. */
  readonly deleteResolvedPages: (teamId: string, before: string, batch: number) => Effect.Effect<number>
}>()("herald/AuditLogRepo") {
  static readonly layer = Layer.effect(AuditLogRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const where = (filter: AuditFilter, after: AuditKey | null) => {
      const conditions = [sql`team_id = ${filter.teamId}`]
      if (filter.from !== undefined) conditions.push(sql`created_at >= ${filter.from}::text::timestamptz`)
      if (filter.to !== undefined) conditions.push(sql`created_at < ${filter.to}::text::timestamptz`)
      if (filter.action !== undefined) conditions.push(sql`action = ${filter.action}`)
      if (after !== null) {
        // A row comparison, so the (team_id, created_at, id) index seeks straight to the boundary.
        conditions.push(sql`(created_at, id) < (timestamptz 'epoch' + ${after.at}::text::bigint * interval '1 microsecond', ${after.id})`)
      }
      return sql.and(conditions)
    }

    const page = SqlSchema.findAll({
      Request: Schema.Struct({ filter: Schema.Any, after: Schema.Any, limit: Schema.Number }),
      Result: AuditRow,
      execute: ({ after, filter, limit }) =>
        sql`SELECT id, team_id, actor_user_id, actor_name, actor_token_id, action, target_type, target_id, metadata,
                   ip, user_agent, created_at, (extract(epoch FROM created_at) * 1000000)::bigint::text AS at
            FROM team_audit WHERE ${where(filter, after)}
            ORDER BY created_at DESC, id DESC LIMIT ${limit}`
    })

    const countUpTo = SqlSchema.findOne({
      Request: Schema.Struct({ filter: Schema.Any, atMost: Schema.Number }),
      Result: Schema.Struct({ n: Schema.Number }),
      execute: ({ atMost, filter }) =>
        sql`SELECT count(*)::int AS n FROM (SELECT 1 FROM team_audit WHERE ${where(filter, null)} LIMIT ${atMost}) AS s`
    })


    const teamsWithRetention = SqlSchema.findAll({
      Request: Schema.Void,
      Result: Schema.Struct({ id: Schema.String, retentionDays: Schema.Number }),
      execute: () => sql`SELECT id, retention_days FROM teams WHERE retention_days IS NOT NULL ORDER BY id`
    })

    const deleteOlder = SqlSchema.findOne({
      Request: Schema.Struct({ teamId: Schema.String, before: Schema.String, batch: Schema.Number }),
      Result: Schema.Struct({ n: Schema.Number }),
      execute: ({ batch, before, teamId }) =>
        sql`WITH gone AS (
              DELETE FROM team_audit WHERE id IN (
                SELECT id FROM team_audit WHERE team_id = ${teamId} AND created_at < ${before}::text::timestamptz
                ORDER BY created_at LIMIT ${batch})
              RETURNING 1)
            SELECT count(*)::int AS n FROM gone`
    })

    const deleteResolvedPages = SqlSchema.findOne({
      Request: Schema.Struct({ teamId: Schema.String, before: Schema.String, batch: Schema.Number }),
      Result: Schema.Struct({ n: Schema.Number }),
      execute: ({ batch, before, teamId }) =>
        sql`WITH gone AS (
              DELETE FROM pages WHERE id IN (
                SELECT id FROM pages WHERE team_id = ${teamId} AND status = 'resolved'
                  AND resolved_at < ${before}::text::timestamptz
                ORDER BY resolved_at LIMIT ${batch})
              RETURNING 1)
            SELECT count(*)::int AS n FROM gone`
    })

    return AuditLogRepo.of({
      page: (filter, after, limit) => page({ filter, after, limit }).pipe(Effect.orDie),
      countUpTo: (filter, atMost) => countUpTo({ filter, atMost }).pipe(Effect.map((row) => row.n), Effect.orDie),
      teamsWithRetention: teamsWithRetention(undefined).pipe(Effect.orDie),
      deleteOlder: (teamId, before, batch) => deleteOlder({ teamId, before, batch }).pipe(Effect.map((row) => row.n), Effect.orDie),
      deleteResolvedPages: (teamId, before, batch) =>
        deleteResolvedPages({ teamId, before, batch }).pipe(Effect.map((row) => row.n), Effect.orDie)
    })
  }))
}

/** The boundary after `row`, for the next page. */
export const keyOf = (row: AuditRow): AuditKey => ({ at: row.at, id: row.id })

/** An entry as the API shows it (the row without its key). */
export const entryOf = (row: AuditRow): AuditLogEntry => {
  const { at: _, ...fields } = row
  return new AuditLogEntry(fields)
}
