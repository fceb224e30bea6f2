/**
 * SQL of the e-mail channel: the person's settings (`email_channels`, read
 * with the account's address), the prompts to mail and when
 * (`prompt_email_fallbacks`, written with the prompt), and who may be mailed:
 * only a person whose channel is on and whose account address is the one
 * they verified.
 */
import { Array as Arr, Context, Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { makeWriter, write } from "../db/UnitOfWork.ts"

export const ChannelRow = Schema.Struct({
  email: Schema.String,
  name: Schema.String,
  enabled: Schema.Boolean,
  verified: Schema.Boolean,
  verificationSentAt: Schema.NullOr(Schema.String),
  promptAfterSeconds: Schema.NullOr(Schema.Int),
  pages: Schema.Boolean,
  mailsSent: Schema.Int,
  lastMailAt: Schema.NullOr(Schema.String)
})
export type ChannelRow = typeof ChannelRow.Type

/** A person mail may go to now. */
export const Recipient = Schema.Struct({
  userId: Schema.String,
  email: Schema.String,
  name: Schema.String,
  promptAfterSeconds: Schema.NullOr(Schema.Int),
  pages: Schema.Boolean
})
export type Recipient = typeof Recipient.Type

export interface NewFallback {
  readonly interactionId: string
  readonly userId: string
  readonly dueAt: string
}

const Due = Schema.Struct({ interactionId: Schema.String, dueAt: Schema.String })
const Owner = Schema.Struct({ userId: Schema.String })

export class ChannelRepo extends Context.Service<ChannelRepo, {
  /** The person's settings with the account's address; undefined for an unknown person. */
  readonly get: (userId: string) => Effect.Effect<ChannelRow | undefined>
  readonly put: (userId: string, enabled: boolean, promptAfterSeconds: number | null | undefined, pages: boolean | undefined) => Effect.Effect<void>
  /** Claims the right to send a verification mail now (none sent in the last `minutes`). */
  readonly claimVerification: (userId: string, minutes: number) => Effect.Effect<boolean>
  /** Marks the account's current address verified when `matches` accepts it; false when it does not (the address changed). */
  readonly verify: (userId: string, matches: (email: string) => boolean) => Effect.Effect<boolean>
  /** Of `userIds`, those mail may go to now (channel on, address verified). */
  readonly recipients: (userIds: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<Recipient>>
  /** A prompt to mail at `dueAt`, written in the caller's unit of work (with the prompt). */
  readonly addFallback: (row: NewFallback) => Effect.Effect<void>
  /** Whose prompt this fallback is; undefined when the prompt was never to be mailed. */
  readonly fallbackOwner: (interactionId: string) => Effect.Effect<string | undefined>
  /** Pending prompts to mail whose timer is not stored (a crash between the commit and the timer). */
  readonly missingTimers: Effect.Effect<ReadonlyArray<{ readonly interactionId: string; readonly dueAt: string }>>
}>()("herald/ChannelRepo") {
  static readonly layer = Layer.effect(ChannelRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const get = SqlSchema.findAll({
      Request: Schema.String,
      Result: ChannelRow,
      execute: (userId) =>
        sql`
          SELECT u.email, u.name, COALESCE(c.enabled, false) AS enabled,
                 COALESCE(c.verified_address = lower(u.email), false) AS verified,
                 c.verification_sent_at, c.prompt_after_seconds, COALESCE(c.pages, true) AS pages,
                 s.mails_sent, s.last_mail_at
          FROM users u LEFT JOIN email_channels c ON c.user_id = u.id
          CROSS JOIN LATERAL (
            SELECT count(*)::int AS mails_sent, max(o.sent_at) AS last_mail_at FROM mail_outbox o
            WHERE o.user_id = u.id AND o.status = 'sent') s
          WHERE u.id = ${userId}`
    })

    const recipients = SqlSchema.findAll({
      Request: Schema.Array(Schema.String),
      Result: Recipient,
      execute: (userIds) =>
        sql`
          SELECT u.id AS user_id, u.email, u.name, c.prompt_after_seconds, c.pages
          FROM email_channels c JOIN users u ON u.id = c.user_id
          WHERE c.user_id IN ${sql.in(userIds)} AND c.enabled AND c.verified_address = lower(u.email)`
    })

    const fallbacks = makeWriter<NewFallback>((rows) => sql`INSERT INTO prompt_email_fallbacks ${sql.insert(Arr.map(rows, (r) => ({ ...r })))}`)

    const owner = SqlSchema.findAll({
      Request: Schema.String,
      Result: Owner,
      execute: (id) => sql`SELECT user_id FROM prompt_email_fallbacks WHERE interaction_id = ${id}`
    })

    // One verification mail per window: the row moves only when the last one is older (two requests: one wins).
    const claim = SqlSchema.findAll({
      Request: Schema.Struct({ userId: Schema.String, minutes: Schema.Int }),
      Result: Owner,
      execute: ({ minutes, userId }) =>
        sql`
          UPDATE email_channels SET verification_sent_at = now()
          WHERE user_id = ${userId}
            AND (verification_sent_at IS NULL OR verification_sent_at < now() - make_interval(mins => ${minutes}))
          RETURNING user_id`
    })

    const markVerified = SqlSchema.findAll({
      Request: Schema.Struct({ userId: Schema.String, email: Schema.String }),
      Result: Owner,
      execute: ({ email, userId }) =>
        sql`
          INSERT INTO email_channels (user_id, verified_address, verified_at)
          SELECT u.id, lower(u.email), now() FROM users u WHERE u.id = ${userId} AND lower(u.email) = ${email}
          ON CONFLICT (user_id) DO UPDATE SET verified_address = EXCLUDED.verified_address, verified_at = now(), updated_at = now()
          RETURNING user_id`
    })

    const missing = SqlSchema.findAll({
      Request: Schema.Void,
      Result: Due,
      execute: () =>
        sql`
          SELECT f.interaction_id, f.due_at FROM prompt_email_fallbacks f
          JOIN interactions i ON i.id = f.interaction_id
          WHERE i.status = 'pending' AND f.due_at < i.expires_at
            AND NOT EXISTS (SELECT 1 FROM mail_outbox o WHERE o.dedupe_key = 'prompt:' || f.interaction_id)
            AND NOT EXISTS (
              SELECT 1 FROM cluster_messages m
              WHERE m.entity_type = 'Prompt' AND m.entity_id = f.interaction_id AND m.tag = 'EmailFallback')`
    })

    return ChannelRepo.of({
      get: (userId) => get(userId).pipe(Effect.map((rows) => rows[0]), Effect.orDie),
      put: (userId, enabled, after, pages) =>
        sql`
          INSERT INTO email_channels (user_id, enabled, prompt_after_seconds, pages)
          VALUES (${userId}, ${enabled}, ${after ?? null}, ${pages ?? true})
          ON CONFLICT (user_id) DO UPDATE SET
            enabled = EXCLUDED.enabled,
            prompt_after_seconds = ${after === undefined ? sql`email_channels.prompt_after_seconds` : sql`EXCLUDED.prompt_after_seconds`},
            pages = ${pages === undefined ? sql`email_channels.pages` : sql`EXCLUDED.pages`},
            updated_at = now()`.pipe(Effect.asVoid, Effect.orDie),
      claimVerification: (userId, minutes) =>
        claim({ userId, minutes }).pipe(Effect.map((rows) => rows.length > 0), Effect.orDie),
      verify: (userId, matches) =>
        Effect.gen(function*() {
          const row = (yield* get(userId))[0]
          if (row === undefined || !matches(row.email)) return false
          // The address verified is the one the link was for: the update holds only while the account's is still it.
          const done = yield* markVerified({ userId, email: row.email.toLowerCase() })
          return done.length > 0
        }).pipe(Effect.orDie),
      recipients: (userIds) => userIds.length === 0 ? Effect.succeed([]) : recipients(userIds).pipe(Effect.orDie),
      addFallback: (row) => write(fallbacks, [row]),
      fallbackOwner: (id) => owner(id).pipe(Effect.map((rows) => rows[0]?.userId), Effect.orDie),
      missingTimers: missing(undefined).pipe(Effect.orDie)
    })
  }))
}
