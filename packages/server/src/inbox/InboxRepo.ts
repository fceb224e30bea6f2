/**
 * SQL of the inbox: one `inbox_items` row per recipient, ordered by `seq`.
 * Every query is scoped by the recipient's `user_id`. Writes run in the
 * caller's unit of work (db/UnitOfWork.ts) or transaction when there is one.
 */
import { BodyFormat, InboxNotificationDetail, InboxNotificationSummary, InboxOrigin, InboxProject, PushReceipt } from "@herald/api"
import { Array as Arr, Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { makeWriter, write } from "../db/UnitOfWork.ts"

/** The NOTIFY channel of inbox changes (inbox/InboxSignals.ts listens on it). */
export const INBOX_CHANNEL = "herald_inbox"

/** The first key of the inbox's per-person advisory locks (the second is the person's hash). */
const INBOX_LOCK_SPACE = 7_031

/** A row to insert into `inbox_items`: every column but `seq` and `read_at`. */
const InboxItemRow = Schema.Struct({
  userId: Schema.String,
  origin: InboxOrigin,
  itemId: Schema.String,
  projectId: Schema.NullOr(Schema.String),
  sourceName: Schema.String,
  sourceImageUrl: Schema.NullOr(Schema.String),
  title: Schema.String,
  preview: Schema.String,
  body: Schema.String,
  summary: Schema.NullOr(Schema.String),
  bodyFormat: BodyFormat,
  url: Schema.NullOr(Schema.String),
  appId: Schema.NullOr(Schema.String),
  createdAt: Schema.String
})
export type InboxItemRow = typeof InboxItemRow.Type

/** Which items a list shows: every project, one project, or the unfiled ones (`project_id IS NULL`). */
export type ProjectFilter =
  | { readonly _tag: "Any" }
  | { readonly _tag: "Unfiled" }
  | { readonly _tag: "Project"; readonly projectId: string }

export interface ListRequest {
  readonly userId: string
  readonly project: ProjectFilter
  readonly unreadOnly: boolean
  /** Only items with `seq` below this (the cursor); none for the first page. */
  readonly beforeSeq: string | null
  readonly limit: number
}

/** `bigint` crosses the driver as text; cast in SQL so it never turns into a float. */
const Seq = Schema.String

const SummaryRow = Schema.Struct({ seq: Seq, ...InboxNotificationSummary.fields })

/** A list item and its place in the inbox (what a cursor names). */
export interface Listed {
  readonly seq: string
  readonly item: InboxNotificationSummary
}

const ItemKey = Schema.Struct({ userId: Schema.String, origin: Schema.String, itemId: Schema.String })
type ItemKey = typeof ItemKey.Type

/** The item's read state before a mark, and after it. */
const MarkRow = Schema.Struct({ readAt: Schema.NullOr(Schema.String), wasRead: Schema.Boolean })
export type MarkRow = typeof MarkRow.Type

const Count = Schema.Struct({ n: Schema.Number })
const UserId = Schema.Struct({ userId: Schema.String })

export class InboxRepo extends Context.Service<InboxRepo, {
  /** Inserts rows now; a row whose (user, origin, item) exists is left as it is. Answers how many were new. */
  readonly insert: (rows: ReadonlyArray<InboxItemRow>) => Effect.Effect<number>
  /** The same insert, in the caller's unit of work when there is one (else now). */
  readonly add: (rows: ReadonlyArray<InboxItemRow>) => Effect.Effect<void>
  /** The highest `seq` of the account's inbox, "0" when empty. */
  readonly topSeq: (userId: string) => Effect.Effect<string>
  /** One row more than `limit` when more follow, newest first. */
  readonly list: (request: ListRequest) => Effect.Effect<ReadonlyArray<Listed>>
  /** The account's projects, most recent first, each named (the unfiled ones "Unfiled"). */
  readonly projects: (userId: string, max: number) => Effect.Effect<ReadonlyArray<InboxProject>>
  readonly totalUnread: (userId: string) => Effect.Effect<number>
  /** The item without its receipts. */
  readonly find: (key: ItemKey) => Effect.Effect<Option.Option<InboxNotificationDetail>>
  readonly receipts: (key: ItemKey) => Effect.Effect<ReadonlyArray<PushReceipt>>
  readonly markRead: (key: ItemKey) => Effect.Effect<Option.Option<MarkRow>>
  readonly markUnread: (key: ItemKey) => Effect.Effect<Option.Option<MarkRow>>
  /** Marks the account's unread items with `seq` up to `seq` read; answers how many. */
  readonly readThrough: (userId: string, seq: string) => Effect.Effect<number>
  /** Sends these NOTIFY payloads on the inbox's channel (InboxSignals.ts), in a statement of their own. */
  readonly announce: (payloads: ReadonlyArray<string>) => Effect.Effect<void>
}>()("herald/InboxRepo") {
  static readonly layer = Layer.effect(InboxRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const summaryColumns = sql`
      i.origin || ':' || i.item_id AS id, i.origin, i.project_id, i.project_id AS project_name, i.source_name,
      i.source_image_url, i.title, i.preview, i.url, i.body_format, i.read_at, i.created_at,
      (SELECT json_build_object('id', a.id, 'name', a.name, 'origin', a.origin, 'iconUrl', a.icon_url)
       FROM apps a
       WHERE a.id = i.app_id
         AND (a.user_id = i.user_id
              OR EXISTS (SELECT 1 FROM team_members m WHERE m.team_id = a.team_id AND m.user_id = i.user_id))) AS app`

    const listRows = SqlSchema.findAll({
      Request: Schema.Struct({
        userId: Schema.String,
        project: Schema.Union([
          Schema.TaggedStruct("Any", {}),
          Schema.TaggedStruct("Unfiled", {}),
          Schema.TaggedStruct("Project", { projectId: Schema.String })
        ]),
        unreadOnly: Schema.Boolean,
        beforeSeq: Schema.NullOr(Seq),
        limit: Schema.Number
      }),
      Result: SummaryRow,
      execute: (r) => {
        const conditions = [
          sql`i.user_id = ${r.userId}`,
          ...(r.project._tag === "Unfiled" ? [sql`i.project_id IS NULL`] : []),
          ...(r.project._tag === "Project" ? [sql`i.project_id = ${r.project.projectId}`] : []),
          ...(r.unreadOnly ? [sql`i.read_at IS NULL`] : []),
          ...(r.beforeSeq === null ? [] : [sql`i.seq < ${r.beforeSeq}::bigint`])
        ]
        return sql`SELECT i.seq::text AS seq, ${summaryColumns} FROM inbox_items i
                   WHERE ${sql.and(conditions)} ORDER BY i.seq DESC LIMIT ${r.limit + 1}`
      }
    })
    const list = (r: ListRequest) =>
      Effect.map(listRows(r), (rows) => rows.map(({ seq, ...fields }) => ({ seq, item: new InboxNotificationSummary(fields) })))

    // One row per project: its counts, and its latest item (DISTINCT ON picks the highest seq).
    const projects = SqlSchema.findAll({
      Request: Schema.Struct({ userId: Schema.String, max: Schema.Number }),
      Result: InboxProject,
      execute: ({ max, userId }) =>
        sql`WITH counts AS (
              SELECT project_id, count(*)::int AS total_count,
                     (count(*) FILTER (WHERE read_at IS NULL))::int AS unread_count, max(seq) AS latest_seq
              FROM inbox_items WHERE user_id = ${userId} GROUP BY project_id
              ORDER BY latest_seq DESC LIMIT ${max}
            )
            SELECT c.project_id, COALESCE(c.project_id, 'Unfiled') AS name, c.unread_count, c.total_count,
                   i.title AS latest_title, i.preview AS latest_preview, i.source_image_url AS latest_image_url,
                   i.created_at AS latest_at
            FROM counts c JOIN inbox_items i ON i.seq = c.latest_seq
            ORDER BY c.latest_seq DESC`
    })

    const find = SqlSchema.findOneOption({
      Request: ItemKey,
      Result: InboxNotificationDetail,
      execute: (k) =>
        sql`SELECT ${summaryColumns}, i.body, i.summary,
                   CASE WHEN i.origin = 'notification' AND n.withdrawn_at IS NOT NULL THEN 'withdrawn'
                        WHEN i.origin = 'interaction' THEN p.status
                        WHEN i.origin = 'page' THEN pg.status END AS status
            FROM inbox_items i
            LEFT JOIN notifications n ON i.origin = 'notification' AND n.id = i.item_id
            LEFT JOIN interactions p ON i.origin = 'interaction' AND p.id = i.item_id
            LEFT JOIN pages pg ON i.origin = 'page' AND pg.id = i.item_id
            WHERE i.user_id = ${k.userId} AND i.origin = ${k.origin} AND i.item_id = ${k.itemId}`
    })

    // Alert pushes of this item to the account's own devices; `sending` is a push in flight.
    const receipts = SqlSchema.findAll({
      Request: ItemKey,
      Result: PushReceipt,
      execute: (k) =>
        sql`SELECT r.id, r.device_id, CASE WHEN r.status = 'sending' THEN 'pending' ELSE r.status END AS status,
                   r.error_code, r.checked_at
            FROM push_receipts r
            WHERE r.item_id = ${k.itemId} AND r.origin = ${k.origin} AND r.purpose = 'alert' AND r.user_id = ${k.userId}
            ORDER BY r.created_at, r.id`
    })

    // The row is locked while its state is read, so two concurrent marks agree on which one changed it.
    const mark = (read: boolean) =>
      SqlSchema.findOneOption({
        Request: ItemKey,
        Result: MarkRow,
        execute: (k) =>
          sql`WITH prev AS (
                SELECT seq, read_at FROM inbox_items
                WHERE user_id = ${k.userId} AND origin = ${k.origin} AND item_id = ${k.itemId}
                FOR UPDATE
              ), changed AS (
                UPDATE inbox_items i SET read_at = ${read ? sql`now()` : sql`NULL`}
                FROM prev WHERE i.seq = prev.seq AND ${read ? sql`prev.read_at IS NULL` : sql`prev.read_at IS NOT NULL`}
                RETURNING i.read_at
              )
              SELECT CASE WHEN EXISTS (SELECT 1 FROM changed) THEN (SELECT read_at FROM changed) ELSE prev.read_at END
                       AS read_at,
                     prev.read_at IS NOT NULL AS was_read
              FROM prev`
      })
    const markRead = mark(true)
    const markUnread = mark(false)

    // `seq` must follow commit order within a person's inbox (cursors and
    // read-through tokens rely on it), so each insert holds that person's
    // advisory lock from before its `seq` is drawn until it commits. Rows are
    // sorted by person so concurrent inserts take their locks in one order.
    const items = makeWriter<InboxItemRow>((rows) => {
      const sorted = [...rows].sort((a, b) => (a.userId < b.userId ? -1 : a.userId > b.userId ? 1 : 0))
      return sql`
        INSERT INTO inbox_items (user_id, origin, item_id, project_id, source_name, source_image_url, title, preview,
                                 body, summary, body_format, url, app_id, created_at)
        SELECT r."userId", r.origin, r."itemId", r."projectId", r."sourceName", r."sourceImageUrl", r.title, r.preview,
               r.body, r.summary, r."bodyFormat", r.url, r."appId", r."createdAt"
        FROM jsonb_to_recordset(${JSON.stringify(sorted)}::jsonb) AS r(
          "userId" text, origin text, "itemId" text, "projectId" text, "sourceName" text, "sourceImageUrl" text,
          title text, preview text, body text, summary text, "bodyFormat" text, url text, "appId" text,
          "createdAt" timestamptz)
        CROSS JOIN LATERAL (SELECT pg_advisory_xact_lock(${INBOX_LOCK_SPACE}, hashtext(r."userId"))) AS locked
        ON CONFLICT (user_id, origin, item_id) DO NOTHING`
    })
    const insertCounted = SqlSchema.findOne({
      Request: Schema.NonEmptyArray(InboxItemRow),
      Result: Count,
      execute: (rows) =>
        sql`WITH added AS (${items.statement(rows)} RETURNING 1)
            SELECT count(*)::int AS n FROM added`
    })

    const topSeq = SqlSchema.findOne({
      Request: UserId,
      Result: Schema.Struct({ seq: Seq }),
      execute: ({ userId }) => sql`SELECT coalesce(max(seq), 0)::text AS seq FROM inbox_items WHERE user_id = ${userId}`
    })
    const totalUnread = SqlSchema.findOne({
      Request: UserId,
      Result: Count,
      execute: ({ userId }) => sql`SELECT count(*)::int AS n FROM inbox_items WHERE user_id = ${userId} AND read_at IS NULL`
    })
    const readThrough = SqlSchema.findOne({
      Request: Schema.Struct({ userId: Schema.String, seq: Seq }),
      Result: Count,
      execute: ({ seq, userId }) =>
        sql`WITH marked AS (
              UPDATE inbox_items SET read_at = now()
              WHERE user_id = ${userId} AND read_at IS NULL AND seq <= ${seq}::bigint
              RETURNING 1
            ) SELECT count(*)::int AS n FROM marked`
    })

    const announce = SqlSchema.void({
      Request: Schema.Array(Schema.String),
      execute: (payloads) => sql`SELECT pg_notify(${INBOX_CHANNEL}, p) FROM unnest(${payloads}::text[]) AS p`
    })

    return InboxRepo.of({
      insert: (rows) =>
        Arr.isReadonlyArrayNonEmpty(rows) ? insertCounted(rows).pipe(Effect.map((row) => row.n), Effect.orDie) : Effect.succeed(0),
      add: (rows) => write(items, rows),
      topSeq: (userId) => topSeq({ userId }).pipe(Effect.map((row) => row.seq), Effect.orDie),
      list: (r) => list(r).pipe(Effect.orDie),
      projects: (userId, max) => projects({ userId, max }).pipe(Effect.orDie),
      totalUnread: (userId) => totalUnread({ userId }).pipe(Effect.map((row) => row.n), Effect.orDie),
      find: (k) => find(k).pipe(Effect.orDie),
      receipts: (k) => receipts(k).pipe(Effect.orDie),
      markRead: (k) => markRead(k).pipe(Effect.orDie),
      markUnread: (k) => markUnread(k).pipe(Effect.orDie),
      readThrough: (userId, seq) => readThrough({ userId, seq }).pipe(Effect.map((row) => row.n), Effect.orDie),
      announce: (payloads) => payloads.length === 0 ? Effect.void : announce(payloads).pipe(Effect.orDie)
    })
  }))
}
