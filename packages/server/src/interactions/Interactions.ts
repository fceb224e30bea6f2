/**
 * The prompts capability's rules. Creating a prompt commits it with its inbox
 * copy, feed entry and device pushes in one statement, schedules its durable
 * expiry on its entity, then sends the pushes and answers how many providers
 * accepted. Everything that changes a prompt afterwards — an answer, a cancel,
 * the deadline — goes through that entity, which also wakes the waiters.
 */
import {
  AnswerMismatch,
  Interaction,
  InteractionCreated,
  InteractionNotPending,
  InteractiveLiveActivityUnsupported,
  NotFound,
  ValidationFailed
} from "@herald/api"
import type { Unauthorized } from "@herald/api"
import type {
  AgentPrincipal,
  AnswerRequest,
  CreateInteractionRequest,
  InboxInteraction,
  ActivityCapacityExceeded,
  ServiceUnavailable
} from "@herald/api"
import { Clock, Context, Effect, Layer } from "effect"
import { LiveActivities } from "../activities/LiveActivities.ts"
import { AppAccess } from "../apps/AppAccess.ts"
import { Credentials } from "../auth/Credentials.ts"
import { ActivityFeed } from "../inbox/ActivityFeed.ts"
import { InboxWrites, previewOf } from "../inbox/InboxWrites.ts"
import { MAX_PENDING_LISTED } from "../config/Limits.ts"
import { canonicalSha256 } from "../lib/Canonical.ts"
import { Deadline } from "../cluster/Deadline.ts"
import * as EntityCalls from "../cluster/EntityCalls.ts"
import type { MissingReference } from "../db/ForeignKeys.ts"
import { UnitOfWork } from "../db/UnitOfWork.ts"
import { DeviceTargeting } from "../identity/DeviceTargeting.ts"
import { makeId } from "../lib/Ids.ts"
import { Outbox, sentText } from "../push/Outbox.ts"
import { ReplyWebhooks } from "../webhooks/ReplyWebhooks.ts"
import { promptAlert } from "./PromptAlert.ts"
import { Prompt } from "./PromptProtocol.ts"
import { Reminders } from "./Reminders.ts"
import { PromptMail } from "../email/PromptMail.ts"
import { InteractionsRepo } from "./InteractionsRepo.ts"
import type { NewInteraction } from "./InteractionsRepo.ts"

const notFound = new NotFound({ error: "Prompt not found." })

/** A row the prompt names was deleted after it was checked: the 404 the check would have answered a moment later. */
const missingReference = (error: MissingReference) =>
  new NotFound({ error: error.constraint?.includes("webhook") === true ? "Reply webhook not found." : "A resource the prompt names no longer exists." })
/** decisions.md: default and bounds of `expiresInSeconds`. */
const DEFAULT_EXPIRY_SECONDS = 3600
const DEFAULT_WAIT_SECONDS = 30

/** Whether `answer` is an answer of `kind`: a status for approval and yes_no, a reply's text (one of its choices, if any). */
const defaultFits = (kind: Interaction["kind"], answer: string, choices: ReadonlyArray<string>) => {
  switch (kind) {
    case "approval":
      return answer === "approved" || answer === "denied"
    case "yes_no":
      return answer === "yes" || answer === "no"
    case "reply":
      return choices.length === 0 || choices.includes(answer)
  }
}

const defaultMismatch = (kind: Interaction["kind"], choices: ReadonlyArray<string>) =>
  new AnswerMismatch({
    error: kind === "approval"
      ? "defaultOnTimeout of an approval prompt is `approved` or `denied`."
      : kind === "yes_no"
      ? "defaultOnTimeout of a yes_no prompt is `yes` or `no`."
      : `defaultOnTimeout of a reply prompt with choices is one of them (${choices.map((c) => JSON.stringify(c)).join(", ")}).`
  })

const createdMessage = (accepted: number, devices: number, queued: number, held = 0): string => {
  if (devices === 0) return "Saved to the inbox; the account has no active devices. The prompt is pending."
  const parts = ["Pending.", ...sentText({ accepted, queued }, devices)]
  // Quiet hours (quiet/QuietGate.ts): not sent until they end, unless the prompt is `urgent`.
  if (held > 0) parts.push(`${held} held for the person's quiet hours (send urgent: true to break through).`)
  parts.push("Use GET /interactions/{id}/wait for the answer.")
  return parts.join(" ")
}

export class Interactions extends Context.Service<Interactions, {
  readonly create: (
    agent: AgentPrincipal,
    input: CreateInteractionRequest
  ) => Effect.Effect<
    InteractionCreated,
    NotFound | AnswerMismatch | ValidationFailed | InteractiveLiveActivityUnsupported | ActivityCapacityExceeded | ServiceUnavailable
  >
  readonly pending: (userId: string) => Effect.Effect<ReadonlyArray<InboxInteraction>>
  readonly get: (tokenId: string, id: string) => Effect.Effect<Interaction, NotFound>
  /** A prompt addressed to the person, in any state, with its source (the console's prompt page). */
  readonly getForPerson: (userId: string, id: string) => Effect.Effect<InboxInteraction, NotFound>
  readonly wait: (tokenId: string, id: string, timeoutSeconds: number | undefined) => Effect.Effect<Interaction, NotFound | ServiceUnavailable | Unauthorized>
  readonly cancel: (tokenId: string, id: string) => Effect.Effect<Interaction, NotFound | InteractionNotPending | ServiceUnavailable>
  readonly answer: (
    userId: string,
    id: string,
    input: AnswerRequest
  ) => Effect.Effect<Interaction, NotFound | InteractionNotPending | AnswerMismatch | ServiceUnavailable>
  /**
   * Stores the expiry timer of every pending prompt that has none (a crash
   * between a prompt's commit and its timer, or a timer refused by a busy
   * cluster). Run at start by a worker (`runtime/Workers.ts`).
   */
  readonly rescheduleDeadlines: Effect.Effect<void, ServiceUnavailable>
}>()("herald/Interactions") {
  static readonly layerNoDeps = Layer.effect(Interactions, Effect.gen(function*() {
    const repo = yield* InteractionsRepo
    const outbox = yield* Outbox
    const inbox = yield* InboxWrites
    const feed = yield* ActivityFeed
    const credentials = yield* Credentials
    const webhooks = yield* ReplyWebhooks
    const prompt = yield* Prompt.client
    const activities = yield* LiveActivities
    const targeting = yield* DeviceTargeting
    const unit = yield* UnitOfWork
    const apps = yield* AppAccess
    const reminders = yield* Reminders
    const emailFallback = yield* PromptMail

    const scheduleExpiry = (id: string, expiresAt: string) =>
      EntityCalls.call(prompt(id).Expire(Deadline.at(expiresAt), { discard: true }))

    /** presentation `live_activity`: the card is queued per device and sent by its entity; nothing is accepted yet. */
    const createCard = (
      agent: AgentPrincipal,
      row: NewInteraction & { readonly liveActivityId: string },
      deviceIds: ReadonlyArray<string>,
      appId: string | null
    ) =>
      Effect.gen(function*() {
        const { interaction, queued } = yield* repo.inTransaction(Effect.gen(function*() {
          // The prompt and its filing in one statement, before the card that refers to it.
          const interaction = yield* unit.commit(Effect.tap(repo.insert(row), () => file(row, appId))).pipe(
            Effect.catchTag("MissingReference", (e) => Effect.fail(missingReference(e)))
          )
          const queued = yield* activities.startPromptCard(row.liveActivityId, interaction, agent, deviceIds)
          return { interaction, queued }
        }))
        yield* Effect.all([scheduleExpiry(row.id, row.expiresAt), activities.cardStarted(row.liveActivityId, row.expiresAt)]).pipe(
          Effect.uninterruptible
        )
        return new InteractionCreated({
          interaction,
          accepted: 0,
          liveActivityId: row.liveActivityId,
          queued,
          message: `Pending. The interactive card is queued for ${queued} device${queued === 1 ? "" : "s"}; ` +
            "read the prompt later for provider acceptance. Use GET /interactions/{id}/wait for the answer."
        })
      })

    /**
     * The prompt's inbox copy and activity-feed entry, written with it (in the caller's unit of work). The
     * Interaction record has no app field: `appId` shows on the inbox copy only (its `app`).
     */
    const file = (row: NewInteraction, appId: string | null) =>
      Effect.all([
        inbox.add([{
          userId: row.userId,
          origin: "interaction",
          itemId: row.id,
          projectId: row.projectId,
          sourceName: row.sourceName,
          title: row.title,
          body: row.prompt,
          url: row.url,
          appId,
          createdAt: row.createdAt
        }]),
        feed.add([{
          userId: row.userId,
          kind: "response",
          refId: row.id,
          sourceName: row.sourceName,
          title: row.title,
          detail: previewOf(row.prompt, "text"),
          url: row.url,
          result: null,
          createdAt: row.createdAt
        }])
      ])

    const create = Effect.fn("Interactions.create")(function*(agent: AgentPrincipal, input: CreateInteractionRequest) {
      const presentation = input.presentation ?? "notification"
      const choices = input.choices ?? []
      const defaultOnTimeout = input.defaultOnTimeout ?? null
      if (defaultOnTimeout !== null && !defaultFits(input.kind, defaultOnTimeout, choices)) {
        return yield* defaultMismatch(input.kind, choices)
      }
      // A card stays on the lock screen: it is never reminded (and the person's default does not apply to it).
      if (presentation === "live_activity" && input.remind !== undefined && input.remind !== null) {
        return yield* new ValidationFailed({
          error: "The request failed validation.",
          issues: [{ path: "remind", message: "A live_activity prompt is not reminded: omit remind or send null." }]
        })
      }
      const webhookId = input.webhookId ?? null
      if (webhookId !== null && !(yield* webhooks.exists(agent.userId, webhookId))) {
        return yield* new NotFound({ error: "Reply webhook not found." })
      }
      // Like POST /notifications: an app the account can see, else 404.
      yield* apps.requireVisible(agent.userId, input.appId)
      const appId = input.appId ?? null
      const devices = yield* targeting.targets(agent.userId)
      const cardDevices = devices.filter((d) => d.interactiveLiveActivitiesCapable).map((d) => d.id)
      if (presentation === "live_activity" && cardDevices.length === 0) {
        return yield* new InteractiveLiveActivityUnsupported({
          error: "No active device of the account can show an interactive live activity (interactiveLiveActivitiesCapable)."
        })
      }
      const sourceName = agent.tokenName
      const id = yield* makeId("int")
      const now = yield* Clock.currentTimeMillis
      const createdAt = new Date(now).toISOString()
      const expiresAt = new Date(now + (input.expiresInSeconds ?? DEFAULT_EXPIRY_SECONDS) * 1000).toISOString()
      const remind = presentation === "live_activity"
        ? null
        : input.remind === undefined
        ? yield* reminders.defaultsForPrompt(agent.userId)
        : input.remind
      // When the person is mailed if the prompt is still pending (email/PromptMail.ts); null: never.
      const mailAfter = yield* emailFallback.plan(agent.userId, input.fallback, input.expiresInSeconds ?? DEFAULT_EXPIRY_SECONDS)
      // A card is on the lock screen until it ends: like reminders, no mail for it.
      const mailDue = mailAfter === null || presentation === "live_activity" ? null : now + mailAfter * 1000
      const row: NewInteraction = {
        id,
        userId: agent.userId,
        tokenId: agent.tokenId,
        sourceName,
        webhookId,
        kind: input.kind,
        presentation,
        title: input.title,
        prompt: input.prompt,
        choices,
        imageUrl: input.imageUrl ?? null,
        url: input.url ?? null,
        primaryLabel: input.primaryLabel ?? null,
        secondaryLabel: input.secondaryLabel ?? null,
        projectId: input.projectId ?? null,
        actionDigest: canonicalSha256({ kind: input.kind, title: input.title, prompt: input.prompt, choices }),
        liveActivityId: presentation === "live_activity" ? yield* makeId("act") : null,
        expiresAt,
        createdAt,
        urgent: input.urgent ?? false,
        defaultOnTimeout,
        remindEverySeconds: remind?.everySeconds ?? null,
        remindTimes: remind?.times ?? null
      }
      if (row.liveActivityId !== null) return yield* createCard(agent, { ...row, liveActivityId: row.liveActivityId }, cardDevices, appId)
      const message = promptAlert(row)
      // An urgent prompt breaks through quiet hours (quiet/QuietGate.ts).
      const delivery = { devices, origin: "interaction", itemId: id, purpose: "alert", message, priority: row.urgent ? "critical" : undefined } as const
      // From the write on, the request runs to its end even if the caller goes
      // away: the expiry timer must exist and the pushes go out now.
      const { interaction, summary } = yield* Effect.gen(function*() {
        // The prompt, its inbox copy, feed entry and pushes: committed together, in one round trip.
        const [interaction, receiptIds] = yield* unit.commit(Effect.all([
          repo.insert(row),
          outbox.toDevices(delivery, { sendNow: true }),
          file(row, appId),
          mailDue === null ? Effect.void : emailFallback.record(id, agent.userId, mailDue)
        ])).pipe(Effect.catchTag("MissingReference", (e) => Effect.fail(missingReference(e))))
        // Its first reminder's timer is stored with the expiry (each later one by the reminder before it).
        yield* Effect.all([
          scheduleExpiry(id, expiresAt),
          remind === null ? Effect.void : reminders.schedule(id, createdAt, remind.everySeconds, 1, expiresAt),
          mailDue === null ? Effect.void : emailFallback.schedule(id, mailDue)
        ], { concurrency: "unbounded", discard: true })
        const summary = yield* outbox.sendCommitted(receiptIds)
        return { interaction, summary }
      }).pipe(Effect.uninterruptible)
      return new InteractionCreated({
        interaction: new Interaction({ ...interaction, accepted: summary.accepted }),
        accepted: summary.accepted,
        queued: summary.queued,
        message: createdMessage(summary.accepted, devices.length, summary.queued, summary.held)
      })
    })

    const get = (tokenId: string, id: string) =>
      Effect.flatMap(repo.findForToken(id, tokenId), (found) => found === undefined ? notFound : Effect.succeed(found))

    const wait = Effect.fn("Interactions.wait")(function*(tokenId: string, id: string, timeoutSeconds: number | undefined) {
      const found = yield* get(tokenId, id)
      if (found.status !== "pending") return found
      // Parked on the prompt's entity: no connection is held while waiting.
      // When the prompt's shard changes runners (a deploy, a runner joining)
      // the wait is cut and parked again on the new owner, until the
      // caller's own timeout: the handover is not seen.
      // The wait ends with its token: a revocation or expiry interrupts the
      // entity call (its waiter is dropped) and answers 401.
      const deadline = (yield* Clock.currentTimeMillis) + (timeoutSeconds ?? DEFAULT_WAIT_SECONDS) * 1000
      yield* EntityCalls.callUntil(deadline, (timeoutMillis) => prompt(id).Wait({ timeoutMillis }), false).pipe(
        Effect.raceFirst(credentials.ended(tokenId))
      )
      return yield* get(tokenId, id)
    })

    const cancel = Effect.fn("Interactions.cancel")(function*(tokenId: string, id: string) {
      if (!(yield* repo.ownedByToken(id, tokenId))) return yield* notFound
      return yield* EntityCalls.call(prompt(id).Cancel())
    })

    const answer = Effect.fn("Interactions.answer")(function*(userId: string, id: string, input: AnswerRequest) {
      if (!(yield* repo.ownedByUser(id, userId))) return yield* notFound
      const deviceId = input.deviceId ?? null
      if (deviceId !== null) yield* targeting.owned(userId, deviceId)
      return yield* EntityCalls.call(prompt(id).Answer({ status: input.status, response: input.response ?? null, userId, deviceId }))
    })

    const rescheduleDeadlines = Effect.flatMap(repo.pendingDeadlines, (rows) =>
      Effect.forEach(rows, (r) => scheduleExpiry(r.id, r.expiresAt), { concurrency: 16, discard: true })).pipe(
        // And the next reminder of each prompt whose timer was lost between two reminders.
        Effect.andThen(reminders.rescheduleMissing),
        // And the e-mail fallback of each prompt whose timer was lost.
        Effect.andThen(emailFallback.rescheduleMissing),
        Effect.withSpan("Interactions.rescheduleDeadlines")
      )

    return Interactions.of({
      create,
      pending: (userId) => repo.pending(userId, MAX_PENDING_LISTED),
      get,
      getForPerson: (userId, id) =>
        Effect.flatMap(repo.findInboxForUser(id, userId), (found) => found === undefined ? notFound : Effect.succeed(found)),
      wait,
      cancel,
      answer,
      rescheduleDeadlines
    })
  }))
}
