/**
 * A person's e-mail channel (Person API): the fallback for prompts still
 * pending after a while and for pages when the person has no active device,
 * mailed to the account's address once the person proved they read it
 * (docs/email.md).
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { Timestamp } from "../domain/Common.ts"
import { ValidationFailed } from "../errors.ts"
import { personOperation } from "../Operation.ts"
import { PersonAuth } from "../Security.ts"

/** The shortest delay before a pending prompt is mailed. */
export const EMAIL_FALLBACK_MIN_SECONDS = 60
/** The longest delay (a prompt's longest life; it must also be shorter than the prompt's own expiry). */
export const EMAIL_FALLBACK_MAX_SECONDS = 604_800
/** A verification mail is sent at most once per this many minutes. */
export const EMAIL_VERIFICATION_EVERY_MINUTES = 10

export const EmailFallbackSeconds = Schema.Int.check(
  Schema.isBetween({ minimum: EMAIL_FALLBACK_MIN_SECONDS, maximum: EMAIL_FALLBACK_MAX_SECONDS })
).annotate({ description: `Seconds, ${EMAIL_FALLBACK_MIN_SECONDS}–${EMAIL_FALLBACK_MAX_SECONDS}.` })

export class EmailChannel extends Schema.Class<EmailChannel>("EmailChannel")({
  /** Whether anything is mailed at all. */
  enabled: Schema.Boolean,
  /** Where mail goes: the account's e-mail address. */
  address: Schema.String,
  /** Whether the person proved they read `address` (a verification link opened and confirmed). */
  verified: Schema.Boolean,
  /** When the last verification mail was sent; null when none was. */
  verificationSentAt: Schema.NullOr(Timestamp),
  /** The delay before a pending prompt is mailed when its creator gave no `fallback`; null: only prompts that ask. */
  promptAfterSeconds: Schema.NullOr(Schema.Int),
  /** Whether a page reaches the person by e-mail when they have no active device. */
  pages: Schema.Boolean,
  /** Whether this server can send mail at all (`HERALD_SMTP_URL` set). */
  mailConfigured: Schema.Boolean,
  /** How many of the channel's mails to the person the SMTP server accepted (verification mails included). */
  mailsSent: Schema.Int,
  /** When the SMTP server last accepted one of them; null when none was. */
  lastMailAt: Schema.NullOr(Timestamp)
}) {}

export const PutEmailChannelRequest = Schema.Struct({
  enabled: Schema.Boolean,
  promptAfterSeconds: Schema.optionalKey(Schema.NullOr(EmailFallbackSeconds)),
  pages: Schema.optionalKey(Schema.Boolean)
}).annotate({ identifier: "PutEmailChannelRequest" })
export type PutEmailChannelRequest = typeof PutEmailChannelRequest.Type

const rules = "Mail goes to the account's e-mail address, and only once the person proved they read it: turning " +
  "the channel on with an address not yet verified mails a verification link (again at most once every " +
  `${EMAIL_VERIFICATION_EVERY_MINUTES} minutes, on a later PUT); nothing else is mailed until that link is confirmed, ` +
  "and a change of the account's address needs a new verification. A prompt is mailed once, when still pending " +
  "`afterSeconds` after its creation (its own `fallback.email.afterSeconds`, else `promptAfterSeconds`), with one " +
  "link per answer (approve/deny, yes/no, each choice of a reply prompt, and a link to answer a reply in free text). " +
  "A page is mailed, with an acknowledge link, to a person it reaches who has no active device, when `pages` is on. " +
  "A link opens a confirmation page (`/answer/{token}`); only its button answers (a GET never does). Links are " +
  "signed, work once and end with the prompt (a page's with its page; a verification link after 24 hours)."

export class PersonEmailChannelGroup extends HttpApiGroup.make("emailChannel")
  .add(
    HttpApiEndpoint.get("get", "/me/email-channel", { success: EmailChannel }).pipe(personOperation({
      summary: "My e-mail channel",
      description: "The person's e-mail fallback settings. A person who never set them reads the defaults: off, " +
        "not verified, `promptAfterSeconds` null (only prompts created with `fallback` are mailed), `pages` true. " +
        rules
    })),
    HttpApiEndpoint.put("put", "/me/email-channel", {
      payload: PutEmailChannelRequest,
      success: EmailChannel,
      error: ValidationFailed
    }).pipe(personOperation({
      summary: "Set my e-mail channel",
      description: "Sets `enabled`, and `promptAfterSeconds` (" +
        `${EMAIL_FALLBACK_MIN_SECONDS}–${EMAIL_FALLBACK_MAX_SECONDS}, or null) and \`pages\` when given (absent: unchanged). ` +
        "Turning it on when the server sends no mail (`mailConfigured` false) answers 400 `VALIDATION_FAILED` " +
        "(issue at `enabled`); out-of-range values answer 400 `VALIDATION_FAILED` with `issues`. Later changes " +
        "do not touch prompts already pending. Answers the settings. " + rules
    }))
  )
  .middleware(PersonAuth)
{}
