/**
 * The outgoing mail of the e-mail channel: a table of mails to send
 * (`mail_outbox`) and the worker that sends them (runtime/Workers.ts).
 *
 * A mail is queued by one insert keyed by what it is for (`dedupe_key`:
 * `prompt:<id>`, `page:<id>:<user>`, `verify:<user>:<time>`), so the timer or
 * page step that queues it, delivered twice, queues it once — that insert is
 * the claim. The worker takes due mails with a lease (`FOR UPDATE SKIP
 * LOCKED`, so two nodes never take the same one), hands each to the SMTP
 * server, and only then marks it sent.
 *
 * The crash window: a process that dies after the SMTP server accepted a mail
 * and before `sent` commits leaves it queued; when its lease ends (two
 * minutes) it is sent again. That order never loses a mail; the opposite
 * (mark, then send) would lose one to a crash in the same window. The resent
 * mail has the same `Message-ID`, so mail clients show it once.
 */
import { Context, Duration, Effect, Layer, Option, Queue, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { randomUUID } from "node:crypto"
import { Mailer } from "../auth/Mailer.ts"
import type { Mail, MailFailed } from "../auth/Mailer.ts"
import { AppConfig } from "../config/AppConfig.ts"

export type MailPurpose = "prompt" | "page" | "verify"

export interface NewMail {
  readonly userId: string
  readonly purpose: MailPurpose
  readonly refId: string
  readonly dedupeKey: string
  readonly toAddress: string
  readonly subject: string
  readonly body: string
}

/** Mails taken at once by one pass. */
const BATCH = 16
/** How long a taken mail is this node's before another may take it (longer than a send's 45 s bound). */
const LEASE_SECONDS = 120
/** Attempts before a mail is given up (`failed`, logged); about a day of backoff. */
const MAX_ATTEMPTS = 12
/** How often the worker looks without being woken (another node's mails, retries). */
const POLL = Duration.seconds(2)

const Claimed = Schema.Struct({
  id: Schema.String,
  toAddress: Schema.String,
  subject: Schema.String,
  body: Schema.String,
  attempts: Schema.Int
})
const Inserted = Schema.Struct({ id: Schema.String })

export class MailOutbox extends Context.Service<MailOutbox, {
  /**
   * Queues a mail unless one with its key exists (in the caller's transaction, if any); with `whilePending`
   * only while that prompt is still pending. Answers whether this call queued it.
   */
  readonly enqueue: (mail: NewMail, options?: { readonly whilePending?: string }) => Effect.Effect<boolean>
  /** Tells this node's worker there is mail (after the commit). */
  readonly wake: Effect.Effect<void>
  /** One pass of the worker: waits for mail (woken, or a poll), sends what is due. */
  readonly drain: Effect.Effect<void>
  /** Whether mail can be sent at all (`HERALD_SMTP_URL`). */
  readonly configured: boolean
}>()("herald/MailOutbox") {
  static readonly layerNoDeps = Layer.effect(MailOutbox, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const mailer = yield* Mailer
    const { publicUrl } = yield* AppConfig
    const host = new URL(publicUrl).hostname
    const wakeups = yield* Queue.sliding<void>(1)

    const insert = SqlSchema.findAll({
      Request: Schema.Struct({
        id: Schema.String,
        userId: Schema.String,
        purpose: Schema.String,
        refId: Schema.String,
        dedupeKey: Schema.String,
        toAddress: Schema.String,
        subject: Schema.String,
        body: Schema.String,
        whilePending: Schema.NullOr(Schema.String)
      }),
      Result: Inserted,
      execute: ({ whilePending, ...row }) =>
        sql`
          INSERT INTO mail_outbox (id, user_id, purpose, ref_id, dedupe_key, to_address, subject, body)
          SELECT ${row.id}, ${row.userId}, ${row.purpose}, ${row.refId}, ${row.dedupeKey}, ${row.toAddress}, ${row.subject}, ${row.body}
          WHERE ${whilePending === null ? sql`true` : sql`EXISTS (SELECT 1 FROM interactions WHERE id = ${whilePending} AND status = 'pending')`}
          ON CONFLICT (dedupe_key) DO NOTHING
          RETURNING id`
    })

    const claim = SqlSchema.findAll({
      Request: Schema.Void,
      Result: Claimed,
      execute: () =>
        sql`
          WITH due AS (
            SELECT m.id, (m.purpose = 'prompt' AND EXISTS (
                     SELECT 1 FROM interactions i WHERE i.id = m.ref_id AND i.status <> 'pending'))
                   OR (m.purpose = 'page' AND EXISTS (
                     SELECT 1 FROM pages p WHERE p.id = m.ref_id AND p.status <> 'triggered')) AS ended
            FROM mail_outbox m
            WHERE m.status = 'queued' AND m.next_attempt_at <= now() AND (m.lease_until IS NULL OR m.lease_until < now())
            ORDER BY m.next_attempt_at
            LIMIT ${BATCH}
            FOR UPDATE OF m SKIP LOCKED),
          -- A mail whose prompt or page ended while it waited (an answer, an acknowledgement) is not sent.
          dropped AS (
            UPDATE mail_outbox SET status = 'dropped', lease_until = NULL
            WHERE id IN (SELECT id FROM due WHERE ended))
          UPDATE mail_outbox SET lease_until = now() + make_interval(secs => ${LEASE_SECONDS}), attempts = attempts + 1
          WHERE id IN (SELECT id FROM due WHERE NOT ended)
          RETURNING id, to_address, subject, body, attempts`
    })

    const sent = (id: string) =>
      sql`UPDATE mail_outbox SET status = 'sent', sent_at = now(), lease_until = NULL, last_error = NULL WHERE id = ${id}`.pipe(
        Effect.asVoid,
        Effect.orDie
      )

    const failed = (id: string, attempts: number, error: string) =>
      sql`
        UPDATE mail_outbox SET
          status = ${attempts >= MAX_ATTEMPTS ? "failed" : "queued"},
          next_attempt_at = now() + make_interval(secs => ${Math.min(3600, 15 * 2 ** (attempts - 1))}),
          lease_until = NULL, last_error = ${error.slice(0, 500)}
        WHERE id = ${id}`.pipe(Effect.asVoid, Effect.orDie)

    const sendOne = (send: (mail: Mail) => Effect.Effect<void, MailFailed>) =>
    (mail: typeof Claimed.Type) =>
      send({ to: mail.toAddress, subject: mail.subject, text: mail.body, messageId: `<${mail.id}@${host}>` }).pipe(
        // Accepted by the SMTP server: only now is it marked sent (the crash window is documented above).
        Effect.andThen(sent(mail.id)),
        Effect.catchTag("MailFailed", (e) =>
          Effect.andThen(
            Effect.logWarning(`mail ${mail.id} not sent (attempt ${mail.attempts}): ${e.message}`),
            failed(mail.id, mail.attempts, e.message)
          ))
      )

    const drain = Effect.gen(function*() {
      if (Option.isNone(mailer.send)) return yield* Effect.never
      const due = yield* claim(undefined).pipe(Effect.orDie)
      yield* Effect.forEach(due, sendOne(mailer.send.value), { concurrency: 4, discard: true })
      if (due.length < BATCH) yield* Queue.take(wakeups).pipe(Effect.timeoutOption(POLL))
    }).pipe(Effect.withSpan("MailOutbox.drain"))

    return MailOutbox.of({
      enqueue: (mail, options) =>
        insert({ id: `mail_${randomUUID()}`, ...mail, whilePending: options?.whilePending ?? null }).pipe(
          Effect.map((rows) => rows.length > 0),
          Effect.orDie
        ),
      wake: Queue.offer(wakeups, undefined).pipe(Effect.asVoid),
      drain,
      configured: Option.isSome(mailer.send)
    })
  }))

  static readonly layer = MailOutbox.layerNoDeps.pipe(Layer.provide(Layer.merge(Mailer.layer, AppConfig.layer)))
}
