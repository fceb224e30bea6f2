/**
 * Sign-in by an e-mailed link (issue 32). A request is answered the same
 * whether or not the address has an account — in body, status and work done
 * before the answer (one statement: the address's window) — so the route
 * tells nobody who has an account. Everything else happens after the answer,
 * on the sign-in mail worker (runtime/Workers.ts): the person is looked up,
 * a one-time link made (oauth/SignInLinks.ts) and mailed (Mailer.ts) or,
 * without SMTP, written to the log. A failure is logged, never silent.
 *
 * Each address gets at most `SIGN_IN_EMAILS_PER_WINDOW` requests per window,
 * whoever asks and whether or not it has an account, counted in the database
 * so the limit holds across nodes.
 */
import { SIGN_IN_EMAIL_WINDOW_MINUTES, SIGN_IN_EMAILS_PER_WINDOW, SIGN_IN_LINK_MINUTES, ValidationFailed } from "@herald/api"
import { Cause, Context, Effect, Layer, Option, Queue } from "effect"
import { hash } from "node:crypto"
import { Identity } from "../identity/Identity.ts"
import { SignInLinks } from "../oauth/SignInLinks.ts"
import { Mailer } from "./Mailer.ts"
import { SignInRepo } from "./SignInRepo.ts"

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/

export const EMAIL_WINDOW_SECONDS = SIGN_IN_EMAIL_WINDOW_MINUTES * 60

/** Requests waiting for the worker on this node; past it a request is logged and dropped. */
export const MAIL_QUEUE_CAPACITY = 1000
/** Mails sent at once by one node's worker. */
const MAIL_CONCURRENCY = 8

interface Pending {
  readonly email: string
  readonly next: string | undefined
}

export type Requested =
  | { readonly accepted: true }
  | { readonly accepted: false; readonly retryAfterSeconds: number }

/** The mail's text: plain and short, the link, its life, and what to do if it was not asked for. */
export const mailText = (name: string, url: string) =>
  [
    `Hello ${name},`,
    "",
    "Open this link to sign in to Herald:",
    "",
    url,
    "",
    `It works once, within ${SIGN_IN_LINK_MINUTES} minutes.`,
    "",
    "If you did not ask to sign in, ignore this mail: nobody is signed in until the link is opened.",
    ""
  ].join("\n")

export const MAIL_SUBJECT = "Sign in to Herald"

export class EmailSignIn extends Context.Service<EmailSignIn, {
  /** Takes a request for a link to `email` (counted against its window), or says when the window reopens. */
  readonly request: (email: string, next: string | undefined) => Effect.Effect<Requested, ValidationFailed>
  /** One round of the worker: waits for requests, then mails (or logs) a link for each with an account. */
  readonly deliver: Effect.Effect<void>
}>()("herald/EmailSignIn") {
  static readonly layerNoDeps = Layer.effect(EmailSignIn, Effect.gen(function*() {
    const repo = yield* SignInRepo
    const identity = yield* Identity
    const links = yield* SignInLinks
    const mailer = yield* Mailer
    const queue = yield* Queue.bounded<Pending>(MAIL_QUEUE_CAPACITY)

    const request = Effect.fn("EmailSignIn.request")(function*(email: string, next: string | undefined) {
      if (!EMAIL.test(email)) {
        return yield* new ValidationFailed({
          error: "Invalid sign-in request.",
          issues: [{ path: "email", message: "Expected an email address" }]
        })
      }
      const window = yield* repo.countEmail(hash("sha256", email.toLowerCase(), "hex"), EMAIL_WINDOW_SECONDS)
      if (window.count > SIGN_IN_EMAILS_PER_WINDOW) {
        return { accepted: false, retryAfterSeconds: Math.max(1, Math.ceil(window.retryAfterSeconds)) } as const
      }
      if (!Queue.offerUnsafe(queue, { email, next })) {
        yield* Effect.logWarning("sign-in mail queue full: a requested link was not made").pipe(
          Effect.annotateLogs({ capacity: MAIL_QUEUE_CAPACITY })
        )
      }
      return { accepted: true } as const
    })

    const deliverOne = (pending: Pending) =>
      Effect.gen(function*() {
        const person = yield* identity.me(pending.email).pipe(Effect.option)
        if (Option.isNone(person)) {
          // Only the operator reads this: in the quick start it says why no link came.
          return yield* (Option.isNone(mailer.send) ? Effect.logInfo : Effect.logDebug)(
            `sign-in link requested for ${pending.email}, which has no account (herald admin user create --email … makes one)`
          )
        }
        const link = yield* links.createForConsole(person.value.id, pending.next)
        if (Option.isNone(mailer.send)) return yield* Effect.logInfo(`sign-in link for ${person.value.email}: ${link.url}`)
        yield* mailer.send.value({ to: person.value.email, subject: MAIL_SUBJECT, text: mailText(person.value.name, link.url) }).pipe(
          Effect.tap(() => Effect.logDebug(`sign-in link mailed to ${person.value.email}`)),
          Effect.catch((failure) => Effect.logWarning(`sign-in mail to ${person.value.email} failed: ${failure.message}`))
        )
      }).pipe(
        // A defect (the database gone) loses this one link, said in the log; the worker goes on.
        Effect.catchCause((cause) =>
          Cause.hasInterruptsOnly(cause) ? Effect.failCause(cause) : Effect.logError("sign-in mail failed", cause)
        ),
        Effect.withSpan("EmailSignIn.deliver")
      )

    const deliver = Effect.flatMap(
      Queue.takeBetween(queue, 1, MAIL_CONCURRENCY * 4),
      (batch) => Effect.forEach(batch, deliverOne, { concurrency: MAIL_CONCURRENCY, discard: true })
    )

    return EmailSignIn.of({ request, deliver })
  }))
}
