/**
 * SQL of prompts. Reads are scoped in SQL: by the creating token (the agent's
 * get, wait and cancel), by the account (lists, the person's answer). A status
 * changes only from `pending`, by one conditional UPDATE, so concurrent
 * answers, a cancel and the expiry race safely: exactly one wins. Every row
 * is decoded (`SqlSchema`) into the contract's records or a schema built from
 * their fields; a new prompt is written through the request's unit of work.
 */
import { InboxInteraction, Interaction } from "@herald/api"
import type { AnswerStatus, InteractionKind, Presentation } from "@herald/api"
import { Array as Arr, Context, Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import type { Statement } from "effect/sql"
import { makeWriter, write } from "../db/UnitOfWork.ts"
import { retireAlertsOf } from "../push/RetiredAlerts.ts"

/** The NOTIFY channel of prompt changes (`announce`; listened to by `Wakeups.ts`). */
export const PROMPTS_CHANNEL = "herald_prompts"

export interface NewInteraction {
  readonly id: string
  readonly userId: string
  readonly tokenId: string
  readonly sourceName: string
  readonly webhookId: string | null
  readonly kind: InteractionKind
  readonly presentation: Presentation
  readonly title: string
  readonly prompt: string
  readonly choices: ReadonlyArray<string>
  readonly imageUrl: string | null
  readonly url: string | null
  readonly primaryLabel: string | null
  readonly secondaryLabel: string | null
  readonly projectId: string | null
  readonly actionDigest: string
  readonly liveActivityId: string | null
  readonly expiresAt: string
  readonly createdAt: string
  /** Breaks through quiet hours. */
  readonly urgent: boolean
  /** The answer given at expiry when nobody answered (a status, or a reply's text). */
  readonly defaultOnTimeout: string | null
  /** The reminder schedule resolved at creation (both null: none). */
  readonly remindEverySeconds: number | null
  readonly remindTimes: number | null
}

/** How a prompt leaves `pending`. */
export type Change =
  | {
    readonly _tag: "Answer"
    readonly status: AnswerStatus
    readonly response: string | null
    readonly userId: string
    readonly deviceId: string | null
  }
  | { readonly _tag: "Cancel" }
  | { readonly _tag: "Expire" }

/** What the outcome events need besides the record. */
export interface Routing {
  readonly userId: string
  readonly webhookId: string | null
  readonly serviceId: string | null
}

const columns = (sql: SqlClient.SqlClient) => sql`
  i.id, i.title, i.prompt, i.kind, i.presentation, i.status, i.choices, i.response, i.image_url, i.url,
  i.action_digest, i.primary_label, i.secondary_label, i.responding_device_id, i.responding_user_id,
  i.expires_at, i.created_at, i.responded_at, i.canceled_at, i.urgent,
  i.default_on_timeout, i.timed_out, i.reminders_sent,
  CASE WHEN i.remind_every_seconds IS NULL THEN NULL
    ELSE json_build_object('everySeconds', i.remind_every_seconds, 'times', i.remind_times) END AS remind,
  CASE WHEN i.presentation = 'live_activity'
    THEN (SELECT count(*)::int FROM live_activity_operations o
          WHERE o.activity_id = i.live_activity_id AND o.op = 'start' AND o.status = 'accepted')
    ELSE (SELECT count(DISTINCT r.device_id)::int FROM push_receipts r
          WHERE r.item_id = i.id AND r.origin = 'interaction' AND r.purpose = 'alert' AND r.status = 'accepted')
  END AS accepted`

const Id = Schema.String
const ForToken = Schema.Struct({ id: Schema.String, tokenId: Schema.String })
const ForUser = Schema.Struct({ id: Schema.String, userId: Schema.String })
const Found = Schema.Struct({ found: Schema.Boolean })
const RoutedRow = Schema.Struct({
  ...Interaction.fields,
  userId: Schema.String,
  webhookId: Schema.NullOr(Schema.String),
  serviceId: Schema.NullOr(Schema.String)
})
const Deadline = Schema.Struct({ id: Interaction.fields.id, expiresAt: Interaction.fields.expiresAt })

/** A new prompt's record, as its row reads back: pending, nothing accepted or answered yet. */
const recordOf = (row: NewInteraction) =>
  new Interaction({
    id: row.id,
    title: row.title,
    prompt: row.prompt,
    kind: row.kind,
    presentation: row.presentation,
    status: "pending",
    choices: row.choices,
    response: null,
    imageUrl: row.imageUrl,
    url: row.url,
    actionDigest: row.actionDigest,
    primaryLabel: row.primaryLabel,
    secondaryLabel: row.secondaryLabel,
    accepted: 0,
    respondingDeviceId: null,
    respondingUserId: null,
    expiresAt: row.expiresAt,
    createdAt: row.createdAt,
    respondedAt: null,
    canceledAt: null,
    urgent: row.urgent,
    defaultOnTimeout: row.defaultOnTimeout,
    timedOut: false,
    remind: row.remindEverySeconds === null || row.remindTimes === null
      ? null
      : { everySeconds: row.remindEverySeconds, times: row.remindTimes },
    remindersSent: 0
  })

export class InteractionsRepo extends Context.Service<InteractionsRepo, {
  /**
   * Writes the prompt in the caller's unit of work (db/UnitOfWork.ts), with
   * the rows that exist with it (inbox copy, feed entry, pushes); answers its
   * record as it will read once committed (nothing accepted yet).
   */
  readonly insert: (row: NewInteraction) => Effect.Effect<Interaction>
  /** Runs `effect` in one transaction (a prompt and its live-activity card; a transition and its events). */
  readonly inTransaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** A prompt created by this token. */
  readonly findForToken: (id: string, tokenId: string) => Effect.Effect<Interaction | undefined>
  /** A prompt of this account (the person answering it). */
  readonly findForUser: (id: string, userId: string) => Effect.Effect<Interaction | undefined>
  readonly find: (id: string) => Effect.Effect<Interaction | undefined>
  /** Whether this token created the prompt (no read of the record). */
  readonly ownedByToken: (id: string, tokenId: string) => Effect.Effect<boolean>
  readonly ownedByUser: (id: string, userId: string) => Effect.Effect<boolean>
  /** The account's pending prompts, newest first. */
  readonly pending: (userId: string, limit: number) => Effect.Effect<ReadonlyArray<InboxInteraction>>
  /** A prompt of this account in any state, as the person's inbox shows it (with its source). */
  readonly findInboxForUser: (id: string, userId: string) => Effect.Effect<InboxInteraction | undefined>
  /**
   * Moves a pending prompt to its next status (in the caller's transaction);
   * none when it is no longer pending (or does not exist).
   */
  readonly transition: (id: string, change: Change) => Effect.Effect<{ readonly interaction: Interaction; readonly routing: Routing } | undefined>
  /**
   * Tells the other processes (`Wakeups.ts`) that the prompt changed: a
   * NOTIFY, delivered when the caller's transaction commits.
   */
  readonly announce: (payload: string) => Effect.Effect<void>
  /**
   * An ended prompt's alerts: those still queued are dropped; answers the
   * devices that got (or are getting) one, which the removal command goes to.
   */
  readonly retireAlerts: (id: string) => Effect.Effect<ReadonlyArray<{ readonly deviceId: string; readonly userId: string }>>
  /**
   * Pending prompts without a stored expiry timer (a crash between a prompt's
   * commit and its timer): what a start must schedule. Usually none.
   */
  readonly pendingDeadlines: Effect.Effect<ReadonlyArray<{ readonly id: string; readonly expiresAt: string }>>
}>()("herald/InteractionsRepo") {
  static readonly layer = Layer.effect(InteractionsRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const first = <A>(rows: ReadonlyArray<A>) => rows[0]

    const interactions = makeWriter<NewInteraction>((rows) =>
      sql`INSERT INTO interactions ${sql.insert(Arr.map(rows, (row) => ({ ...row, choices: JSON.stringify(row.choices) })))}`
    )
    const insert = (row: NewInteraction) => Effect.as(write(interactions, [row]), recordOf(row))

    const findOne = <Req extends Schema.Top>(Request: Req, where: (request: Req["Encoded"]) => Statement.Fragment) =>
      SqlSchema.findAll({
        Request,
        Result: Interaction,
        execute: (request) => sql`SELECT ${columns(sql)} FROM interactions i WHERE ${where(request)}`
      })
    const byToken = findOne(ForToken, ({ id, tokenId }) => sql`i.id = ${id} AND i.token_id = ${tokenId}`)
    const byUser = findOne(ForUser, ({ id, userId }) => sql`i.id = ${id} AND i.user_id = ${userId}`)
    const byId = findOne(Id, (id) => sql`i.id = ${id}`)

    const existsWhere = <Req extends Schema.Top>(Request: Req, where: (request: Req["Encoded"]) => Statement.Fragment) =>
      SqlSchema.findOne({
        Request,
        Result: Found,
        execute: (request) => sql`SELECT EXISTS (SELECT 1 FROM interactions i WHERE ${where(request)}) AS found`
      })
    const tokenOwns = existsWhere(ForToken, ({ id, tokenId }) => sql`i.id = ${id} AND i.token_id = ${tokenId}`)
    const userOwns = existsWhere(ForUser, ({ id, userId }) => sql`i.id = ${id} AND i.user_id = ${userId}`)

    const inboxColumns = sql`${columns(sql)}, i.source_name, NULL::text AS source_image_url, i.project_id`
    const pending = SqlSchema.findAll({
      Request: Schema.Struct({ userId: Schema.String, limit: Schema.Int }),
      Result: InboxInteraction,
      execute: ({ limit, userId }) =>
        sql`
          SELECT ${inboxColumns}
          FROM interactions i
          WHERE i.user_id = ${userId} AND i.status = 'pending' AND i.expires_at > now()
          ORDER BY i.created_at DESC, i.id DESC
          LIMIT ${limit}`
    })
    const inboxByUser = SqlSchema.findAll({
      Request: ForUser,
      Result: InboxInteraction,
      execute: ({ id, userId }) => sql`SELECT ${inboxColumns} FROM interactions i WHERE i.id = ${id} AND i.user_id = ${userId}`
    })

    const setClause = (change: Change) => {
      switch (change._tag) {
        case "Answer":
          return sql`status = ${change.status}, response = ${change.response}, responding_user_id = ${change.userId},
                     responding_device_id = ${change.deviceId}, responded_at = now()`
        case "Cancel":
          return sql`status = 'canceled', canceled_at = now()`
        case "Expire":
          // With a default answer the prompt resolves with it, marked `timed_out` (the right-hand sides read the old row).
          return sql`status = CASE WHEN default_on_timeout IS NULL THEN 'expired'
                                   WHEN kind = 'reply' THEN 'replied' ELSE default_on_timeout END,
                     response = CASE WHEN default_on_timeout IS NOT NULL AND kind = 'reply' THEN default_on_timeout ELSE response END,
                     timed_out = default_on_timeout IS NOT NULL,
                     responded_at = CASE WHEN default_on_timeout IS NULL THEN responded_at ELSE now() END`
      }
    }

    const transitionRows = (id: string, change: Change) =>
      SqlSchema.findAll({
        Request: Id,
        Result: RoutedRow,
        execute: (id) =>
          sql`
            WITH i AS (
              UPDATE interactions SET ${setClause(change)}
              WHERE id = ${id} AND status = 'pending'
              RETURNING *),
            -- The feed shows the outcome; an answered prompt was seen, so its inbox copy is read.
            feed AS (
              UPDATE activity_feed f SET result = i.status FROM i
              WHERE f.user_id = i.user_id AND f.kind = 'response' AND f.ref_id = i.id),
            inbox AS (
              UPDATE inbox_items b SET read_at = COALESCE(b.read_at, now()) FROM i
              WHERE b.user_id = i.user_id AND b.origin = 'interaction' AND b.item_id = i.id
                AND i.status NOT IN ('canceled', 'expired') AND NOT i.timed_out)
            SELECT ${columns(sql)}, i.user_id, i.webhook_id, i.service_id FROM i`
      })(id)

    const transition = (id: string, change: Change) =>
      transitionRows(id, change).pipe(
        Effect.map((rows) => {
          const row = rows[0]
          if (row === undefined) return undefined
          const { serviceId, userId, webhookId, ...fields } = row
          return { interaction: new Interaction(fields), routing: { userId, webhookId, serviceId } }
        }),
        Effect.orDie
      )

    const announce = SqlSchema.void({
      Request: Schema.String,
      execute: (payload) => sql`SELECT pg_notify(${PROMPTS_CHANNEL}, ${payload})`
    })

    const pendingDeadlines = SqlSchema.findAll({
      Request: Schema.Void,
      Result: Deadline,
      execute: () =>
        sql`
          SELECT i.id, i.expires_at FROM interactions i
          WHERE i.status = 'pending' AND NOT EXISTS (
            SELECT 1 FROM cluster_messages m WHERE m.entity_type = 'Prompt' AND m.entity_id = i.id AND m.tag = 'Expire')`
    })

    const retireAlerts = retireAlertsOf(sql, "interaction")

    return InteractionsRepo.of({
      insert,
      inTransaction: (effect) => sql.withTransaction(effect).pipe(Effect.catchTag("SqlError", Effect.die)),
      findForToken: (id, tokenId) => byToken({ id, tokenId }).pipe(Effect.map(first), Effect.orDie),
      findForUser: (id, userId) => byUser({ id, userId }).pipe(Effect.map(first), Effect.orDie),
      find: (id) => byId(id).pipe(Effect.map(first), Effect.orDie),
      ownedByToken: (id, tokenId) => tokenOwns({ id, tokenId }).pipe(Effect.map((r) => r.found), Effect.orDie),
      ownedByUser: (id, userId) => userOwns({ id, userId }).pipe(Effect.map((r) => r.found), Effect.orDie),
      pending: (userId, limit) => pending({ userId, limit }).pipe(Effect.orDie),
      findInboxForUser: (id, userId) => inboxByUser({ id, userId }).pipe(Effect.map(first), Effect.orDie),
      transition,
      announce: (payload) => announce(payload).pipe(Effect.orDie),
      retireAlerts,
      pendingDeadlines: pendingDeadlines(undefined).pipe(Effect.orDie)
    })
  }))
}
