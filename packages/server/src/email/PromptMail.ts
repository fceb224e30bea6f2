/**
 * The e-mail fallback of prompts. A prompt created with
 * `fallback.email.afterSeconds` (else its person's `promptAfterSeconds`), for
 * a person whose channel is on and verified, gets a `prompt_email_fallbacks`
 * row in its creating unit of work and a stored `EmailFallback` timer on its
 * entity (key `email-fallback`), due that many seconds after creation.
 *
 * When the timer fires (`due`, run by the prompt's entity) and the prompt is
 * still pending and the person's channel still on and verified, one mail is
 * queued with a signed link per answer (Links.ts). The queueing insert is the
 * claim: keyed `prompt:<id>` and made only while the prompt is pending, so a
 * timer delivered twice, or on two nodes at once, queues one mail, and an
 * answer committed first leaves nothing to queue. The mail outbox sends it
 * (MailOutbox.ts: claim committed before the send, marked sent after).
 *
 * The person's settings are read through a per-process cache (a prompt's
 * create is a hot path): a change applies at once on the process that took it
 * and within `SETTINGS_TTL` on the others.
 */
import { ValidationFailed } from "@herald/api"
import type { CreateInteractionRequest } from "@herald/api"
import { Cache, Clock, Context, Duration, Effect, Layer, Schedule } from "effect"
import { Deadline } from "../cluster/Deadline.ts"
import * as EntityCalls from "../cluster/EntityCalls.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { Prompt } from "../interactions/PromptProtocol.ts"
import { InteractionsRepo } from "../interactions/InteractionsRepo.ts"
import { ChannelRepo } from "./ChannelRepo.ts"
import type { Recipient } from "./ChannelRepo.ts"
import { EmailLinks } from "./Links.ts"
import { MailOutbox } from "./MailOutbox.ts"
import { answersOf, promptMail } from "./MailText.ts"

/** The primary key of a prompt's fallback timer (its `Expire` is `expire`). */
export const FALLBACK_KEY = "email-fallback"
/** How long another process may use a person's previous settings for a new prompt. */
export const SETTINGS_TTL = Duration.seconds(30)

export class PromptMail extends Context.Service<PromptMail, {
  /**
   * When a new prompt of `userId` is to be mailed, in seconds after creation; null when never (no fallback
   * asked for and no default, or the person's channel is off or unverified). An `afterSeconds` not shorter than
   * the prompt's life answers 400 whatever the channel.
   */
  readonly plan: (
    userId: string,
    fallback: CreateInteractionRequest["fallback"],
    expiresInSeconds: number
  ) => Effect.Effect<number | null, ValidationFailed>
  /** Writes the prompt's fallback row in the caller's unit of work (with the prompt). */
  readonly record: (interactionId: string, userId: string, dueAtMillis: number) => Effect.Effect<void>
  /** Stores the prompt's `EmailFallback` timer (a re-send of a stored one is a no-op). */
  readonly schedule: (interactionId: string, dueAtMillis: number) => Effect.Effect<void>
  /** The timer fired: queue the prompt's one mail, if it is still pending and the channel still on. */
  readonly due: (interactionId: string) => Effect.Effect<void>
  /** Stores the timers a crash lost (run at start). */
  readonly rescheduleMissing: Effect.Effect<void>
  /** Forgets the cached settings of a person (they changed them). */
  readonly invalidate: (userId: string) => Effect.Effect<void>
}>()("herald/PromptMail") {
  static readonly layerNoDeps = Layer.effect(PromptMail, Effect.gen(function*() {
    const channels = yield* ChannelRepo
    const interactions = yield* InteractionsRepo
    const outbox = yield* MailOutbox
    const links = yield* EmailLinks
    const prompt = yield* Prompt.client
    const { publicUrl } = yield* AppConfig
    const cache = yield* Cache.make<string, Recipient | undefined>({
      lookup: (userId) => Effect.map(channels.recipients([userId]), (rows) => rows[0]),
      capacity: 10_000,
      timeToLive: SETTINGS_TTL
    })

    const plan = Effect.fn("PromptMail.plan")(function*(
      userId: string,
      fallback: CreateInteractionRequest["fallback"],
      expiresInSeconds: number
    ) {
      const asked = fallback?.email.afterSeconds
      if (asked !== undefined && asked >= expiresInSeconds) {
        return yield* new ValidationFailed({
          error: "The request failed validation.",
          issues: [{
            path: "fallback.email.afterSeconds",
            message: `Must be less than the prompt's expiresInSeconds (${expiresInSeconds}).`
          }]
        })
      }
      if (fallback === null) return null
      const recipient = yield* Cache.get(cache, userId)
      if (recipient === undefined) return null
      const after = asked ?? recipient.promptAfterSeconds
      return after === null || after >= expiresInSeconds ? null : after
    })

    const schedule = (id: string, dueAtMillis: number) =>
      // A busy cluster may refuse for a moment; a start re-sends what is still missing (rescheduleMissing).
      EntityCalls.call(prompt(id).EmailFallback(Deadline.at(dueAtMillis, FALLBACK_KEY), { discard: true })).pipe(
        Effect.retry({ times: 3, schedule: Schedule.spaced("200 millis") }),
        Effect.catch((e) => Effect.logWarning(`e-mail fallback of ${id} not scheduled; the next start will`, e))
      )

    const due = Effect.fn("PromptMail.due")(function*(id: string) {
      const userId = yield* channels.fallbackOwner(id)
      if (userId === undefined) return
      const found = yield* interactions.findInboxForUser(id, userId)
      const now = yield* Clock.currentTimeMillis
      if (found === undefined || found.status !== "pending" || Date.parse(found.expiresAt) <= now) return
      // Off or unverified now: off means off, whatever it was when the prompt was made.
      const recipient = (yield* channels.recipients([userId]))[0]
      if (recipient === undefined) return
      const expiresAt = Date.parse(found.expiresAt)
      const answerLinks = answersOf(found.kind, found.choices).map((a) => ({
        label: a.label,
        url: `${publicUrl}/answer/${links.sign({ kind: "p", ref: id, arg: a.arg, expiresAt })}`
      }))
      const mail = promptMail(publicUrl, found, answerLinks)
      const queued = yield* outbox.enqueue(
        { userId, purpose: "prompt", refId: id, dedupeKey: `prompt:${id}`, toAddress: recipient.email, ...mail },
        { whilePending: id }
      )
      if (queued) yield* outbox.wake
    })

    const rescheduleMissing = Effect.flatMap(channels.missingTimers, (rows) =>
      Effect.forEach(rows, (r) => schedule(r.interactionId, Date.parse(r.dueAt)), { concurrency: 16, discard: true })).pipe(
        Effect.withSpan("PromptMail.rescheduleMissing")
      )

    return PromptMail.of({
      plan,
      record: (interactionId, userId, dueAtMillis) =>
        channels.addFallback({ interactionId, userId, dueAt: new Date(dueAtMillis).toISOString() }),
      schedule,
      due,
      rescheduleMissing,
      invalidate: (userId) => Cache.invalidate(cache, userId)
    })
  }))
}
