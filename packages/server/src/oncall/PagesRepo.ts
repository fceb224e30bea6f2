/**
 * SQL of pages: the page row (created or absorbed by an open page with the same
 * dedup key in one statement), who each step
 * notified, and the devices still showing a page's alert. Every change is a
 * conditional update, so two processes (or a step re-run after a crash) never
 * apply one twice.
 */
import { OncallPage, PageStatus } from "@herald/api"
import { Context, Effect, Layer, Option, Schema } from "effect"
import type * as Arr from "effect/Array"
import { SqlClient, SqlSchema } from "effect/sql"
import type { SqlError } from "effect/sql"
import { retireAlertsOf } from "../push/RetiredAlerts.ts"

export interface NewPage {
  readonly id: string
  readonly teamId: string
  readonly groupId: string
  readonly groupName: string
  readonly title: string
  readonly body: string | null
  readonly url: string | null
  readonly appId: string | null
  readonly dedupKey: string | null
  readonly createdBy: string
  readonly tokenId: string | null
  readonly createdAt: string
}

/** The page row as the rules read it (the record adds notified people and the app). */
const PageState = Schema.Struct({
  id: Schema.String,
  teamId: Schema.String,
  groupId: Schema.NullOr(Schema.String),
  title: Schema.String,
  body: Schema.NullOr(Schema.String),
  url: Schema.NullOr(Schema.String),
  appId: Schema.NullOr(Schema.String),
  status: PageStatus,
  step: Schema.Number,
  createdAt: Schema.String
})
export type PageState = typeof PageState.Type

const Id = Schema.String
const Absorbed = Schema.Struct({ id: Schema.String, inserted: Schema.Boolean })
const UserIdRow = Schema.Struct({ userId: Schema.String })

const iso = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`

export class PagesRepo extends Context.Service<PagesRepo, {
  readonly inTransaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /**
   * Inserts the page, or — when an open page of the group has the same dedup
   * key — adds one to that page's `repeatCount`. One statement on the unique
   * index `pages_open_dedup_key`: concurrent creates with one key make one page.
   */
  readonly insertOrAbsorb: (page: NewPage) => Effect.Effect<{ readonly id: string; readonly inserted: boolean }>
  readonly state: (id: string, options?: { readonly forUpdate?: boolean }) => Effect.Effect<PageState | undefined>
  readonly record: (id: string) => Effect.Effect<OncallPage | undefined>
  readonly list: (teamId: string, status: PageStatus | undefined, before: string | undefined, limit: number) => Effect.Effect<ReadonlyArray<OncallPage>>
  /** Open pages that notified the person, newest first. */
  readonly openFor: (userId: string) => Effect.Effect<ReadonlyArray<OncallPage>>
  /** Pages in `statuses` (none resolved) of every team the person is a member of, newest first. */
  readonly openOfMember: (userId: string, statuses: ReadonlyArray<PageStatus>, limit: number) => Effect.Effect<ReadonlyArray<OncallPage>>
  /** Marks the people paged at `step`; answers only those not already marked (a re-run pages nobody twice). */
  readonly markNotified: (pageId: string, step: number, userIds: ReadonlyArray<string>, at: string) => Effect.Effect<ReadonlyArray<string>>
  /** Everyone the page notified, at any step. */
  readonly notifiedUsers: (pageId: string) => Effect.Effect<ReadonlyArray<string>>
  /** Advances `step` from `from` to `to` while the page is triggered; false when another change won. */
  readonly advance: (id: string, from: number, to: number, at: string) => Effect.Effect<boolean>
  readonly acknowledge: (id: string, userId: string, at: string) => Effect.Effect<boolean>
  readonly resolve: (id: string, userId: string, at: string) => Effect.Effect<boolean>
  /** Devices that got (or are being sent) the page's alert; alerts still queued are dropped instead. */
  readonly retireAlerts: (id: string) => Effect.Effect<ReadonlyArray<{ readonly deviceId: string; readonly userId: string }>>
  /** Open pages with their creation time: what a start must reschedule. */
  readonly open: Effect.Effect<ReadonlyArray<{ readonly id: string; readonly groupId: string | null; readonly createdAt: string }>>
}>()("herald/PagesRepo") {
  static readonly layer = Layer.effect(PagesRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const die = <A>(effect: Effect.Effect<A, SqlError.SqlError | Schema.SchemaError>) => Effect.orDie(effect)

    const absorb = SqlSchema.findAll({
      Request: Schema.Any,
      Result: Absorbed,
      execute: (p: NewPage) =>
        sql`INSERT INTO pages (id, team_id, group_id, group_name, title, body, url, app_id, dedup_key, created_by, token_id,
                               created_at, updated_at)
            VALUES (${p.id}, ${p.teamId}, ${p.groupId}, ${p.groupName}, ${p.title}, ${p.body}, ${p.url}, ${p.appId},
                    ${p.dedupKey}, ${p.createdBy}, ${p.tokenId}, ${p.createdAt}, ${p.createdAt})
            ON CONFLICT (group_id, dedup_key) WHERE status <> 'resolved' AND dedup_key IS NOT NULL
            DO UPDATE SET repeat_count = pages.repeat_count + 1, updated_at = now()
            RETURNING id, (xmax = 0) AS inserted`
    })

    const stateQuery = SqlSchema.findOneOption({
      Request: Schema.Struct({ id: Schema.String, forUpdate: Schema.Boolean }),
      Result: PageState,
      execute: ({ forUpdate, id }) =>
        sql`SELECT id, team_id, group_id, title, body, url, app_id, status, step, ${sql.literal(iso("created_at"))} AS created_at
            FROM pages WHERE id = ${id}${forUpdate ? sql` FOR UPDATE` : sql``}`
    })

    const recordColumns = sql.literal(`
      p.id, p.group_id, p.group_name, p.team_id, p.title, p.body, p.url, p.status, p.dedup_key, p.repeat_count, p.step,
      ${iso("p.created_at")} AS created_at, ${iso("p.updated_at")} AS updated_at,
      ${iso("p.acknowledged_at")} AS acknowledged_at, p.acknowledged_by,
      ${iso("p.resolved_at")} AS resolved_at, p.resolved_by,
      (SELECT json_build_object('id', a.id, 'name', a.name, 'origin', a.origin, 'iconUrl', a.icon_url)
         FROM apps a WHERE a.id = p.app_id) AS app,
      COALESCE((SELECT json_agg(json_build_object('userId', n.user_id, 'name', u.name, 'at', ${iso("n.at")}, 'step', n.step)
                                ORDER BY n.step, n.at, n.user_id)
                FROM page_notified n JOIN users u ON u.id = n.user_id WHERE n.page_id = p.id), '[]') AS notified`)

    const recordQuery = SqlSchema.findOneOption({
      Request: Id,
      Result: OncallPage,
      execute: (id) => sql`SELECT ${recordColumns} FROM pages p WHERE p.id = ${id}`
    })

    const listQuery = SqlSchema.findAll({
      Request: Schema.Struct({
        teamId: Schema.String,
        status: Schema.NullOr(Schema.String),
        before: Schema.NullOr(Schema.String),
        limit: Schema.Number
      }),
      Result: OncallPage,
      execute: ({ before, limit, status, teamId }) =>
        sql`SELECT ${recordColumns} FROM pages p
            WHERE p.team_id = ${teamId}
              ${status === null ? sql`` : sql`AND p.status = ${status}`}
              ${before === null ? sql`` : sql`AND p.id < ${before}`}
            ORDER BY p.id DESC LIMIT ${limit}`
    })

    const openForQuery = SqlSchema.findAll({
      Request: Id,
      Result: OncallPage,
      execute: (userId) =>
        sql`SELECT ${recordColumns} FROM pages p
            WHERE p.status <> 'resolved'
              AND EXISTS (SELECT 1 FROM page_notified n WHERE n.page_id = p.id AND n.user_id = ${userId})
              AND EXISTS (SELECT 1 FROM team_members m WHERE m.team_id = p.team_id AND m.user_id = ${userId})
            ORDER BY p.id DESC LIMIT 100`
    })

    // Through pages_team_open_idx: a team's resolved history is never walked.
    const openOfMemberQuery = SqlSchema.findAll({
      Request: Schema.Struct({ userId: Schema.String, statuses: Schema.Array(Schema.String), limit: Schema.Number }),
      Result: OncallPage,
      execute: ({ limit, statuses, userId }) =>
        sql`SELECT ${recordColumns} FROM pages p
            WHERE p.team_id IN (SELECT team_id FROM team_members WHERE user_id = ${userId})
              AND p.status <> 'resolved' AND ${sql.in("p.status", statuses)}
            ORDER BY p.id DESC LIMIT ${limit}`
    })

    const notifyQuery = SqlSchema.findAll({
      Request: Schema.Struct({ pageId: Schema.String, step: Schema.Number, userIds: Schema.Array(Schema.String), at: Schema.String }),
      Result: UserIdRow,
      execute: ({ at, pageId, step, userIds }) =>
        sql`INSERT INTO page_notified ${sql.insert(userIds.map((userId) => ({ pageId, userId, step, at })) as unknown as Arr.NonEmptyReadonlyArray<Record<string, unknown>>)}
            ON CONFLICT (page_id, user_id, step) DO NOTHING
            RETURNING user_id`
    })

    const changed = (rows: ReadonlyArray<unknown>) => rows.length > 0

    const retireAlerts = retireAlertsOf(sql, "page")

    const openQuery = SqlSchema.findAll({
      Request: Schema.Void,
      Result: Schema.Struct({ id: Schema.String, groupId: Schema.NullOr(Schema.String), createdAt: Schema.String }),
      execute: () =>
        sql`SELECT id, group_id, ${sql.literal(iso("created_at"))} AS created_at FROM pages WHERE status = 'triggered'`
    })

    return PagesRepo.of({
      inTransaction: (effect) => sql.withTransaction(effect).pipe(Effect.catchTag("SqlError", Effect.die)),
      insertOrAbsorb: (page) => die(absorb(page)).pipe(Effect.map((rows) => rows[0]!)),
      state: (id, options) => die(stateQuery({ id, forUpdate: options?.forUpdate === true })).pipe(Effect.map(Option.getOrUndefined)),
      record: (id) => die(recordQuery(id)).pipe(Effect.map(Option.getOrUndefined)),
      list: (teamId, status, before, limit) => die(listQuery({ teamId, status: status ?? null, before: before ?? null, limit })),
      openFor: (userId) => die(openForQuery(userId)),
      openOfMember: (userId, statuses, limit) => die(openOfMemberQuery({ userId, statuses, limit })),
      markNotified: (pageId, step, userIds, at) =>
        userIds.length === 0
          ? Effect.succeed([])
          : die(notifyQuery({ pageId, step, userIds, at })).pipe(Effect.map((rows) => rows.map((r) => r.userId))),
      notifiedUsers: (pageId) =>
        die(sql<{ userId: string }>`SELECT DISTINCT user_id FROM page_notified WHERE page_id = ${pageId}`).pipe(
          Effect.map((rows) => rows.map((r) => r.userId))
        ),
      advance: (id, from, to, at) =>
        die(sql`UPDATE pages SET step = ${to}, updated_at = ${at}
                WHERE id = ${id} AND status = 'triggered' AND step = ${from} RETURNING id`).pipe(Effect.map(changed)),
      acknowledge: (id, userId, at) =>
        die(sql`UPDATE pages SET status = 'acknowledged', acknowledged_at = ${at}, acknowledged_by = ${userId}, updated_at = ${at}
                WHERE id = ${id} AND status = 'triggered' RETURNING id`).pipe(Effect.map(changed)),
      resolve: (id, userId, at) =>
        die(sql`UPDATE pages SET status = 'resolved', resolved_at = ${at}, resolved_by = ${userId}, updated_at = ${at}
                WHERE id = ${id} AND status <> 'resolved' RETURNING id`).pipe(Effect.map(changed)),
      retireAlerts,
      open: die(openQuery(undefined))
    })
  }))
}
