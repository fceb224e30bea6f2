/**
 * Reminders of pending prompts. A prompt with a schedule (its own `remind`,
 * else its person's default, resolved when it is created) holds one stored
 * `Remind` timer at a time on its entity, keyed `remind:<n>`: reminder n is
 * due `n × everySeconds` after creation, before the expiry. When it fires,
 * the prompt's reminder counter moves from n - 1 to n only while the prompt
 * is pending (a conditional update), and the alert's pushes are queued in
 * that same transaction; then the next timer is stored. A timer delivered
 * twice finds the counter moved and pushes nothing; an answer committed
 * first leaves nothing to claim, and one committed after drops the queued
 * reminder pushes with the original's (Transitions.retireAlert).
 *
 * A person's default is read through a per-process cache (a prompt's create
 * is a hot path): a change applies at once on the process that took it and
 * within `DEFAULTS_TTL` on the others.
 */
import type { ReminderSchedule } from "@herald/api"
import { Cache, Context, Duration, Effect, Layer, Schedule } from "effect"
import { Deadline } from "../cluster/Deadline.ts"
import * as EntityCalls from "../cluster/EntityCalls.ts"
import { DeviceTargeting } from "../identity/DeviceTargeting.ts"
import { Outbox } from "../push/Outbox.ts"
import { promptAlert } from "./PromptAlert.ts"
import { Prompt } from "./PromptProtocol.ts"
import { InteractionsRepo } from "./InteractionsRepo.ts"
import { RemindersRepo } from "./RemindersRepo.ts"

/** How long another process may answer with a person's previous default. */
export const DEFAULTS_TTL = Duration.seconds(30)

/** The key of reminder `n`'s timer, and back. */
export const remindKey = (n: number) => `remind:${n}`
export const reminderNumber = (key: string | undefined): number | undefined => {
  const match = key === undefined ? null : /^remind:(\d+)$/.exec(key)
  return match === null ? undefined : Number(match[1])
}

/** When reminder `n` is due, or none when it would come at or after the expiry. */
export const reminderDue = (createdAt: string, everySeconds: number, n: number, expiresAt: string): number | undefined => {
  const due = Date.parse(createdAt) + n * everySeconds * 1000
  return due < Date.parse(expiresAt) ? due : undefined
}

export class Reminders extends Context.Service<Reminders, {
  /** The person's default schedule (null: none). */
  readonly defaults: (userId: string) => Effect.Effect<ReminderSchedule | null>
  /** The default a new prompt takes: cached per process. */
  readonly defaultsForPrompt: (userId: string) => Effect.Effect<ReminderSchedule | null>
  readonly setDefaults: (userId: string, remind: ReminderSchedule | null) => Effect.Effect<ReminderSchedule | null>
  /** Stores the timer of reminder `n` (a re-send of a stored one is a no-op); none when it would be due at or after expiry. */
  readonly schedule: (id: string, createdAt: string, everySeconds: number, n: number, expiresAt: string) => Effect.Effect<void>
  /** Reminder `n` of prompt `id` is due: push it once, if still pending, and store the next timer. Run by the prompt's entity. */
  readonly send: (id: string, n: number) => Effect.Effect<void>
  /** Stores the next timer of every pending prompt whose next reminder has none (run at start). */
  readonly rescheduleMissing: Effect.Effect<void>
}>()("herald/Reminders") {
  static readonly layerNoDeps = Layer.effect(Reminders, Effect.gen(function*() {
    const repo = yield* RemindersRepo
    const interactions = yield* InteractionsRepo
    const outbox = yield* Outbox
    const targeting = yield* DeviceTargeting
    const prompt = yield* Prompt.client
    const cache = yield* Cache.make({ lookup: repo.defaults, capacity: 10_000, timeToLive: DEFAULTS_TTL })

    const schedule = (id: string, createdAt: string, everySeconds: number, n: number, expiresAt: string) => {
      const due = reminderDue(createdAt, everySeconds, n, expiresAt)
      if (due === undefined) return Effect.void
      // A busy cluster may refuse for a moment; a start re-sends what is still missing (rescheduleMissing).
      return EntityCalls.call(prompt(id).Remind(Deadline.at(due, remindKey(n)), { discard: true })).pipe(
        Effect.retry({ times: 3, schedule: Schedule.spaced("200 millis") }),
        Effect.catch((e) => Effect.logWarning(`reminder ${n} of ${id} not scheduled; the next start will`, e))
      )
    }

    const send = Effect.fn("Reminders.send")(function*(id: string, n: number) {
      const target = yield* repo.target(id)
      if (target === undefined || target.status !== "pending") return
      const { remindEverySeconds: every, remindTimes: times } = target
      if (every === null || times === null || n > times) return
      if (target.remindersSent < n) {
        const devices = yield* targeting.activeOf([target.userId])
        const message = promptAlert(target, n)
        const receipts = yield* interactions.inTransaction(Effect.gen(function*() {
          if (!(yield* repo.claim(id, n))) return []
          // An urgent prompt's reminders break through quiet hours, as its alert does.
          const priority = target.urgent ? "critical" : undefined
          return yield* outbox.toDevices({ devices, origin: "interaction", itemId: id, purpose: "alert", message, priority })
        }))
        // The drain worker sends them: the entity's lock (an answer waits on it) is not held while providers answer.
        if (receipts.length > 0) yield* outbox.wake
      }
      // Also after a redelivery: the next timer may be what the first delivery did not get to store.
      if (n < times) yield* schedule(id, target.createdAt, every, n + 1, target.expiresAt)
    })

    const rescheduleMissing = Effect.flatMap(repo.missing, (rows) =>
      Effect.forEach(rows, (r) => schedule(r.id, r.createdAt, r.everySeconds, r.next, r.expiresAt), {
        concurrency: 16,
        discard: true
      })).pipe(Effect.withSpan("Reminders.rescheduleMissing"))

    return Reminders.of({
      defaults: repo.defaults,
      defaultsForPrompt: (userId) => Cache.get(cache, userId),
      setDefaults: (userId, remind) =>
        repo.setDefaults(userId, remind).pipe(Effect.andThen(Cache.invalidate(cache, userId)), Effect.as(remind)),
      schedule,
      send,
      rescheduleMissing
    })
  }))

  static readonly layer = Reminders.layerNoDeps.pipe(Layer.provideMerge(RemindersRepo.layer))
}
