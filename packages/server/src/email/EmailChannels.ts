/**
 * The person's e-mail channel settings (`/api/app/me/email-channel`) and the
 * proof of their address. Turning the channel on with an address not yet
 * verified queues a verification mail (at most one per
 * `EMAIL_VERIFICATION_EVERY_MINUTES`, claimed by a conditional update so two
 * requests at once send one); its link, confirmed on the answer page, records
 * the address as verified. Only a verified address that is still the
 * account's receives answer links (ChannelRepo.recipients).
 */
import { EMAIL_VERIFICATION_EVERY_MINUTES, EmailChannel, ValidationFailed } from "@herald/api"
import type { PutEmailChannelRequest } from "@herald/api"
import { Clock, Context, Effect, Layer } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import { ChannelRepo } from "./ChannelRepo.ts"
import { addressHash, EmailLinks } from "./Links.ts"
import { MailOutbox } from "./MailOutbox.ts"
import { verificationMail } from "./MailText.ts"
import { PromptMail } from "./PromptMail.ts"

/** How long a verification link works. */
export const VERIFY_LINK_HOURS = 24

export class EmailChannels extends Context.Service<EmailChannels, {
  readonly get: (userId: string) => Effect.Effect<EmailChannel>
  readonly put: (userId: string, input: PutEmailChannelRequest) => Effect.Effect<EmailChannel, ValidationFailed>
  /** The verification link was confirmed: true when the account's address is still the one it was for. */
  readonly confirm: (userId: string, hash: string) => Effect.Effect<boolean>
}>()("herald/EmailChannels") {
  static readonly layerNoDeps = Layer.effect(EmailChannels, Effect.gen(function*() {
    const repo = yield* ChannelRepo
    const outbox = yield* MailOutbox
    const links = yield* EmailLinks
    const prompts = yield* PromptMail
    const { publicUrl } = yield* AppConfig

    const get = Effect.fn("EmailChannels.get")(function*(userId: string) {
      // The person is signed in: their account exists.
      const row = (yield* repo.get(userId))!
      return new EmailChannel({
        enabled: row.enabled,
        address: row.email,
        verified: row.verified,
        verificationSentAt: row.verificationSentAt,
        promptAfterSeconds: row.promptAfterSeconds,
        pages: row.pages,
        mailConfigured: outbox.configured,
        mailsSent: row.mailsSent,
        lastMailAt: row.lastMailAt
      })
    })

    const put = Effect.fn("EmailChannels.put")(function*(userId: string, input: PutEmailChannelRequest) {
      if (input.enabled && !outbox.configured) {
        return yield* new ValidationFailed({
          error: "The request failed validation.",
          issues: [{ path: "enabled", message: "This server sends no mail (HERALD_SMTP_URL is not set)." }]
        })
      }
      yield* repo.put(userId, input.enabled, input.promptAfterSeconds, input.pages)
      yield* prompts.invalidate(userId)
      const row = (yield* repo.get(userId))!
      if (input.enabled && !row.verified && (yield* repo.claimVerification(userId, EMAIL_VERIFICATION_EVERY_MINUTES))) {
        const now = yield* Clock.currentTimeMillis
        const token = links.sign({ kind: "v", ref: userId, arg: addressHash(row.email), expiresAt: now + VERIFY_LINK_HOURS * 3600 * 1000 })
        const mail = verificationMail(publicUrl, row.name, `${publicUrl}/answer/${token}`)
        yield* outbox.enqueue({
          userId,
          purpose: "verify",
          refId: userId,
          dedupeKey: `verify:${userId}:${now}`,
          toAddress: row.email,
          ...mail
        })
        yield* outbox.wake
      }
      return yield* get(userId)
    })

    const confirm = Effect.fn("EmailChannels.confirm")(function*(userId: string, hash: string) {
      const done = yield* repo.verify(userId, (email) => addressHash(email) === hash)
      if (done) yield* prompts.invalidate(userId)
      return done
    })

    return EmailChannels.of({ get, put, confirm })
  }))
}
