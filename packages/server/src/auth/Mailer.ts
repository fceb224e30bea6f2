/**
 * Outgoing mail of sign-in (issue 32): SMTP through `nodemailer` when
 * `HERALD_SMTP_URL` is set, else none, and callers write the link to the log
 * instead (the embedded quick start needs no mail server). One transport per
 * process, closed with the layer; every send is bounded in time.
 */
import { Context, Data, Effect, Layer, Option, Redacted } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import { SignInConfig } from "../config/SignInConfig.ts"

export interface Mail {
  readonly to: string
  readonly subject: string
  readonly text: string
  /** A stable `Message-ID` (`<…@…>`): a mail sent again after a crash is recognisably the same mail. */
  readonly messageId?: string
}

/** A mail the SMTP server did not take (its message says why; it never holds the credentials). */
export class MailFailed extends Data.TaggedError("MailFailed")<{ readonly message: string }> {}

export class Mailer extends Context.Service<Mailer, {
  /** None: no SMTP configured, links go to the log. */
  readonly send: Option.Option<(mail: Mail) => Effect.Effect<void, MailFailed>>
  /** The `From` of every mail. */
  readonly from: string
}>()("herald/Mailer") {
  static readonly layerNoDeps = Layer.effect(Mailer, Effect.gen(function*() {
    const config = yield* SignInConfig
    const { publicUrl } = yield* AppConfig
    const from = Option.getOrElse(config.smtpFrom, () => `Herald <herald@${new URL(publicUrl).hostname}>`)
    if (Option.isNone(config.smtpUrl)) return Mailer.of({ send: Option.none(), from })
    const url = Redacted.value(config.smtpUrl.value)
    // Loaded only when SMTP is set: a start without it skips nodemailer's modules.
    const { createTransport } = yield* Effect.promise(() => import("nodemailer"))
    const transport = yield* Effect.acquireRelease(
      Effect.sync(() =>
        createTransport({
          url,
          connectionTimeout: 10_000,
          greetingTimeout: 10_000,
          socketTimeout: 30_000
        })
      ),
      (t) => Effect.sync(() => t.close())
    )
    const send = (mail: Mail) =>
      Effect.tryPromise({
        try: () => transport.sendMail({ from, to: mail.to, subject: mail.subject, text: mail.text, ...(mail.messageId === undefined ? {} : { messageId: mail.messageId }) }),
        catch: (cause) => new MailFailed({ message: cause instanceof Error ? cause.message : String(cause) })
      }).pipe(
        Effect.timeoutOrElse({ duration: "45 seconds", orElse: () => Effect.fail(new MailFailed({ message: "timed out after 45 s" })) }),
        Effect.asVoid,
        Effect.withSpan("Mailer.send")
      )
    return Mailer.of({ send: Option.some(send), from })
  }))

  static readonly layer = Mailer.layerNoDeps.pipe(Layer.provide(Layer.merge(SignInConfig.layer, AppConfig.layer)))
}
