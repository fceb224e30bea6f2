/**
 * The behaviour of a prompt's actor (its protocol is `PromptProtocol.ts`).
 * Answer, cancel and expiry are serialized through it (the database's
 * conditional update makes the first one win even across nodes); long-poll
 * waiters park on it, holding no database connection, and are woken the
 * moment the prompt leaves `pending`. A change delivered twice (at-least-once
 * delivery, or on two nodes at once) is applied once: Transitions.ts moves the
 * prompt only from `pending` and commits its outcome events with that move.
 * Only the runtime's layer graph imports this module.
 */
import { AnswerMismatch, InteractionNotPending } from "@herald/api"
import type { AnswerStatus, Interaction } from "@herald/api"
import { Deferred, Duration, Effect, Option, Semaphore } from "effect"
import { Entity } from "effect/cluster"
import { PromptMail } from "../email/PromptMail.ts"
import { Prompt } from "./PromptProtocol.ts"
import { reminderNumber, Reminders } from "./Reminders.ts"
import { InteractionsRepo } from "./InteractionsRepo.ts"
import type { Change } from "./InteractionsRepo.ts"
import { Transitions } from "./Transitions.ts"

const notPending = new InteractionNotPending({ error: "The prompt is no longer pending." })

/** Which answers fit which kind (decisions.md). */
const fits = (kind: Interaction["kind"], status: AnswerStatus, response: string | null) => {
  switch (kind) {
    case "approval":
      return (status === "approved" || status === "denied") && response === null
    case "yes_no":
      return (status === "yes" || status === "no") && response === null
    case "reply":
      return status === "replied" && response !== null
  }
}

const mismatch = (kind: Interaction["kind"]) =>
  new AnswerMismatch({
    error: kind === "reply"
      ? "A reply prompt is answered with status `replied` and a `response`."
      : `A ${kind} prompt is answered with ${kind === "approval" ? "`approved` or `denied`" : "`yes` or `no`"} and no response.`
  })

export const PromptLive = Prompt.toLayer(
  Effect.gen(function*() {
    const { entityId: id } = yield* Entity.CurrentAddress
    const repo = yield* InteractionsRepo
    const transitions = yield* Transitions
    const reminders = yield* Reminders
    const mail = yield* PromptMail
    const lock = yield* Semaphore.make(1)
    const settled = yield* Deferred.make<void>()

    // A prompt that already ended (or is unknown) has nothing to wait for.
    const current = yield* repo.find(id)
    if (current === undefined || current.status !== "pending") yield* Deferred.succeed(settled, undefined)

    const change = (c: Change) =>
      lock.withPermit(transitions.apply(id, c)).pipe(
        // Changed by us, or found already ended (another node, an earlier run): either way, done.
        Effect.tap(() => Deferred.succeed(settled, undefined))
      )

    return Prompt.of({
      Expire: () => Effect.asVoid(change({ _tag: "Expire" })),
      // Serialized with the changes: an answer taken here first leaves nothing to remind of.
      Remind: ({ payload }) => {
        const n = reminderNumber(payload.key)
        return n === undefined ? Effect.void : lock.withPermit(reminders.send(id, n))
      },
      // Serialized with the changes too: an answer taken first leaves nothing to mail (the queueing is conditional anyway).
      EmailFallback: () => lock.withPermit(mail.due(id)),
      Answer: ({ payload }) =>
        Effect.gen(function*() {
          const prompt = yield* repo.find(id)
          if (prompt === undefined || prompt.status !== "pending") return yield* notPending
          if (!fits(prompt.kind, payload.status, payload.response)) return yield* mismatch(prompt.kind)
          const changed = yield* change({ _tag: "Answer", ...payload })
          return changed ?? (yield* notPending)
        }),
      Refresh: () =>
        Effect.flatMap(repo.find(id), (found) =>
          found === undefined || found.status !== "pending" ? Deferred.succeed(settled, undefined) : Effect.void),
      Cancel: () => Effect.flatMap(change({ _tag: "Cancel" }), (changed) => changed === undefined ? notPending : Effect.succeed(changed)),
      Wait: ({ payload }) =>
        Deferred.await(settled).pipe(
          Effect.timeoutOption(Duration.millis(payload.timeoutMillis)),
          Effect.map(Option.isSome)
        )
    })
  }),
  // Waits run side by side; changes are serialized by the lock.
  { concurrency: "unbounded", maxIdleTime: Duration.minutes(2) }
)
