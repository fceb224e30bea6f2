/**
 * SQL of reminders: a person's default schedule (`reminder_defaults`), what a
 * reminder of a prompt pushes, the conditional step of its counter, and the
 * pending prompts whose next reminder has no stored timer. Rows are decoded
 * with schemas; the step runs in the caller's transaction, with the pushes it
 * queues (InteractionsRepo.inTransaction).
 */
import { Interaction, ReminderSchedule } from "@herald/api"
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"

const UserId = Schema.String
const Defaults = Schema.Struct({ everySeconds: Schema.Int, times: Schema.Int })
const PutDefaults = Schema.Struct({ userId: Schema.String, everySeconds: Schema.Int, times: Schema.Int })

/** A pending prompt's reminder state and the content its alert is built from. */
const Target = Schema.Struct({
  id: Schema.String,
  userId: Schema.String,
  status: Interaction.fields.status,
  kind: Interaction.fields.kind,
  presentation: Interaction.fields.presentation,
  title: Schema.String,
  prompt: Schema.String,
  url: Schema.NullOr(Schema.String),
  imageUrl: Schema.NullOr(Schema.String),
  projectId: Schema.NullOr(Schema.String),
  actionDigest: Schema.String,
  urgent: Schema.Boolean,
  remindEverySeconds: Schema.NullOr(Schema.Int),
  remindTimes: Schema.NullOr(Schema.Int),
  remindersSent: Schema.Int,
  createdAt: Interaction.fields.createdAt,
  expiresAt: Interaction.fields.expiresAt
})
export type ReminderTarget = typeof Target.Type

const Step = Schema.Struct({ id: Schema.String, n: Schema.Int })
const Claimed = Schema.Struct({ id: Schema.String })

/** The next reminder of a pending prompt: its number and the schedule to time it by. */
const Missing = Schema.Struct({
  id: Schema.String,
  next: Schema.Int,
  everySeconds: Schema.Int,
  createdAt: Interaction.fields.createdAt,
  expiresAt: Interaction.fields.expiresAt
})
export type MissingReminder = typeof Missing.Type

export class RemindersRepo extends Context.Service<RemindersRepo, {
  readonly defaults: (userId: string) => Effect.Effect<ReminderSchedule | null>
  readonly setDefaults: (userId: string, remind: ReminderSchedule | null) => Effect.Effect<void>
  readonly target: (id: string) => Effect.Effect<ReminderTarget | undefined>
  /**
   * Counts reminder `n` as sent, only when the prompt is pending, not yet
   * expired, and at reminder `n - 1` (in the caller's transaction): true when
   * this call moved it, false when it was ended or counted already.
   */
  readonly claim: (id: string, n: number) => Effect.Effect<boolean>
  /**
   * Pending prompts with reminders left and no reminder timer waiting (a
   * crash between a reminder's commit and its next timer): what a start must
   * schedule. Usually none.
   */
  readonly missing: Effect.Effect<ReadonlyArray<MissingReminder>>
}>()("herald/RemindersRepo") {
  static readonly layer = Layer.effect(RemindersRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const defaults = SqlSchema.findAll({
      Request: UserId,
      Result: Defaults,
      execute: (userId) => sql`SELECT every_seconds, times FROM reminder_defaults WHERE user_id = ${userId}`
    })
    const upsert = SqlSchema.void({
      Request: PutDefaults,
      execute: ({ everySeconds, times, userId }) =>
        sql`
          INSERT INTO reminder_defaults (user_id, every_seconds, times) VALUES (${userId}, ${everySeconds}, ${times})
          ON CONFLICT (user_id) DO UPDATE SET every_seconds = excluded.every_seconds, times = excluded.times, updated_at = now()`
    })
    const clear = SqlSchema.void({
      Request: UserId,
      execute: (userId) => sql`DELETE FROM reminder_defaults WHERE user_id = ${userId}`
    })
    const target = SqlSchema.findAll({
      Request: Schema.String,
      Result: Target,
      execute: (id) =>
        sql`
          SELECT id, user_id, status, kind, presentation, title, prompt, url, image_url, project_id, action_digest, urgent,
                 remind_every_seconds, remind_times, reminders_sent, created_at, expires_at
          FROM interactions WHERE id = ${id}`
    })
    const claim = SqlSchema.findAll({
      Request: Step,
      Result: Claimed,
      execute: ({ id, n }) =>
        sql`
          UPDATE interactions SET reminders_sent = ${n}
          WHERE id = ${id} AND status = 'pending' AND expires_at > now()
            AND reminders_sent = ${n - 1} AND remind_times >= ${n}
          RETURNING id`
    })
    const missing = SqlSchema.findAll({
      Request: Schema.Void,
      Result: Missing,
      execute: () =>
        sql`
          SELECT i.id, i.reminders_sent + 1 AS next, i.remind_every_seconds AS every_seconds, i.created_at, i.expires_at
          FROM interactions i
          WHERE i.status = 'pending' AND i.remind_every_seconds IS NOT NULL AND i.reminders_sent < i.remind_times
            AND i.created_at + make_interval(secs => i.remind_every_seconds * (i.reminders_sent + 1)) < i.expires_at
            AND NOT EXISTS (
              SELECT 1 FROM cluster_messages m
              WHERE m.entity_type = 'Prompt' AND m.entity_id = i.id AND m.tag = 'Remind' AND NOT m.processed)`
    })

    return RemindersRepo.of({
      defaults: (userId) =>
        defaults(userId).pipe(
          Effect.map((rows) => rows[0] === undefined ? null : { everySeconds: rows[0].everySeconds, times: rows[0].times }),
          Effect.orDie
        ),
      setDefaults: (userId, remind) => (remind === null ? clear(userId) : upsert({ userId, ...remind })).pipe(Effect.orDie),
      target: (id) => target(id).pipe(Effect.map((rows) => rows[0]), Effect.orDie),
      claim: (id, n) => claim({ id, n }).pipe(Effect.map((rows) => rows.length > 0), Effect.orDie),
      missing: missing(undefined).pipe(Effect.orDie)
    })
  }))
}
