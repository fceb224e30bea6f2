/**
 * SQL of prompts. Reads are scoped in SQL: by the creating token (the agent's
 * get, wait and cancel), by the account (lists, the person's answer). A status
 * changes only from `pending`, by one conditional UPDATE, so concurrent
 * answers, a cancel and the expiry race safely: exactly one wins.
 */
import { InboxInteraction, Interaction } from "@herald/api"
import type { AnswerStatus, InteractionKind, Presentation } from "@herald/api"
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import type { Statement } from "effect/sql"
import { alongsideMembers } from "../db/Statements.ts"

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

export interface PromptDevice {
  readonly id: string
  readonly userId: string
  readonly interactive: boolean
}

const columns = (sql: SqlClient.SqlClient) => sql`
  i.id, i.title, i.prompt, i.kind, i.presentation, i.status, i.choices, i.response, i.image_url, i.url,
  i.action_digest, i.primary_label, i.secondary_label, i.responding_device_id, i.responding_user_id,
  i.expires_at, i.created_at, i.responded_at, i.canceled_at,
  CASE WHEN i.presentation = 'live_activity'
    THEN (SELECT count(*)::int FROM live_activity_operations o
          WHERE o.activity_id = i.live_activity_id AND o.op = 'start' AND o.status = 'accepted')
    ELSE (SELECT count(DISTINCT r.device_id)::int FROM push_receipts r
          WHERE r.item_id = i.id AND r.origin = 'interaction' AND r.purpose = 'alert' AND r.status = 'accepted')
  END AS accepted`

const InteractionRow = Schema.Struct({ ...Interaction.fields })
const InboxInteractionRow = Schema.Struct({ ...InboxInteraction.fields })
const RoutedRow = Schema.Struct({
  ...Interaction.fields,
  userId: Schema.String,
  webhookId: Schema.NullOr(Schema.String),
  serviceId: Schema.NullOr(Schema.String)
})

const toInteraction = (row: typeof InteractionRow.Type) => new Interaction(row, { disableChecks: true })

export class InteractionsRepo extends Context.Service<InteractionsRepo, {
  /** Inserts the prompt and, in the same statement, the rows that exist with it (inbox copy, feed entry, pushes). */
  readonly insert: (row: NewInteraction, alongside: ReadonlyArray<Statement.Statement<unknown>>) => Effect.Effect<Interaction>
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
  /**
   * Moves a pending prompt to its next status (in the caller's transaction);
   * none when it is no longer pending (or does not exist).
   */
  readonly transition: (id: string, change: Change) => Effect.Effect<{ readonly interaction: Interaction; readonly routing: Routing } | undefined>
  /** The account's active devices, and whether each can show an interactive live activity. */
  readonly devices: (userId: string) => Effect.Effect<ReadonlyArray<PromptDevice>>
  /** Whether the device is the person's. */
  readonly ownsDevice: (userId: string, deviceId: string) => Effect.Effect<boolean>
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
    const decodeOne = Schema.decodeUnknownEffect(Schema.Array(InteractionRow))
    const decodeInbox = Schema.decodeUnknownEffect(Schema.Array(InboxInteractionRow))
    const decodeRouted = Schema.decodeUnknownEffect(Schema.Array(RoutedRow))

    const first = (rows: ReadonlyArray<typeof InteractionRow.Type>) => rows[0] === undefined ? undefined : toInteraction(rows[0])

    const insert = (row: NewInteraction, alongside: ReadonlyArray<Statement.Statement<unknown>>) =>
      sql`
        WITH i AS (
          INSERT INTO interactions ${sql.insert({ ...row, choices: JSON.stringify(row.choices) })}
          RETURNING *)
        ${alongsideMembers(sql, alongside)}
        SELECT ${columns(sql)} FROM i`.pipe(
        Effect.flatMap(decodeOne),
        // Nothing is accepted yet: the pushes are sent after the commit.
        Effect.map((rows) => toInteraction({ ...rows[0]!, accepted: 0 })),
        Effect.orDie
      )

    const findWhere = (where: Statement.Fragment) =>
      sql`SELECT ${columns(sql)} FROM interactions i WHERE ${where}`.pipe(
        Effect.flatMap(decodeOne),
        Effect.map(first),
        Effect.orDie
      )

    const exists = (where: Statement.Fragment) =>
      sql`SELECT 1 FROM interactions i WHERE ${where}`.pipe(Effect.map((rows) => rows.length > 0), Effect.orDie)

    const pending = (userId: string, limit: number) =>
      sql`
        SELECT ${columns(sql)}, i.source_name, NULL::text AS source_image_url, i.project_id
        FROM interactions i
        WHERE i.user_id = ${userId} AND i.status = 'pending' AND i.expires_at > now()
        ORDER BY i.created_at DESC, i.id DESC
        LIMIT ${limit}`.pipe(
        Effect.flatMap(decodeInbox),
        Effect.map((rows) => rows.map((row) => new InboxInteraction(row, { disableChecks: true }))),
        Effect.orDie
      )

    const setClause = (change: Change) => {
      switch (change._tag) {
        case "Answer":
          return sql`status = ${change.status}, response = ${change.response}, responding_user_id = ${change.userId},
                     responding_device_id = ${change.deviceId}, responded_at = now()`
        case "Cancel":
          return sql`status = 'canceled', canceled_at = now()`
        case "Expire":
          return sql`status = 'expired'`
      }
    }

    const transition = (id: string, change: Change) =>
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
            AND i.status NOT IN ('canceled', 'expired'))
        SELECT ${columns(sql)}, i.user_id, i.webhook_id, i.service_id FROM i`.pipe(
        Effect.flatMap(decodeRouted),
        Effect.map((rows) => {
          const row = rows[0]
          if (row === undefined) return undefined
          const { userId, webhookId, serviceId, ...fields } = row
          return { interaction: toInteraction(fields), routing: { userId, webhookId, serviceId } }
        }),
        Effect.orDie
      )

    const pendingDeadlines = sql<{ id: string; expiresAt: string }>`
      SELECT i.id, i.expires_at FROM interactions i
      WHERE i.status = 'pending' AND NOT EXISTS (
        SELECT 1 FROM cluster_messages m WHERE m.entity_type = 'Prompt' AND m.entity_id = i.id)`.pipe(Effect.orDie)

    const devices = (userId: string) =>
      sql<PromptDevice>`
        SELECT id, user_id, interactive_live_activities_capable AS interactive
        FROM devices WHERE user_id = ${userId} AND active ORDER BY created_at, id`.pipe(Effect.orDie)

    const ownsDevice = (userId: string, deviceId: string) =>
      sql`SELECT 1 FROM devices WHERE id = ${deviceId} AND user_id = ${userId}`.pipe(
        Effect.map((rows) => rows.length > 0),
        Effect.orDie
      )

    const retireAlerts = (id: string) =>
      sql<{ deviceId: string; userId: string }>`
        WITH dropped AS (
          UPDATE push_receipts SET status = 'error', error_code = 'Withdrawn', checked_at = now()
          WHERE item_id = ${id} AND origin = 'interaction' AND purpose = 'alert' AND status = 'pending')
        SELECT DISTINCT r.device_id, r.user_id FROM push_receipts r JOIN devices d ON d.id = r.device_id
        WHERE r.item_id = ${id} AND r.origin = 'interaction' AND r.purpose = 'alert' AND r.status IN ('accepted', 'sending')`.pipe(
        Effect.orDie
      )

    return InteractionsRepo.of({
      insert,
      retireAlerts,
      devices,
      ownsDevice,
      findForToken: (id, tokenId) => findWhere(sql`i.id = ${id} AND i.token_id = ${tokenId}`),
      findForUser: (id, userId) => findWhere(sql`i.id = ${id} AND i.user_id = ${userId}`),
      find: (id) => findWhere(sql`i.id = ${id}`),
      ownedByToken: (id, tokenId) => exists(sql`i.id = ${id} AND i.token_id = ${tokenId}`),
      ownedByUser: (id, userId) => exists(sql`i.id = ${id} AND i.user_id = ${userId}`),
      pending,
      transition,
      pendingDeadlines
    })
  }))
}
