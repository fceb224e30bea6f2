/**
 * The summary of held pushes (mode `hold`), sent once when a person's quiet
 * ends: one alert per device saying how many items arrived and the first few
 * titles; tapping it opens the inbox, where the items are. A pass (run by a
 * worker, runtime/Workers.ts, every few seconds and when woken) takes the
 * people whose held items are due and, per person in one transaction, locks
 * those items (another node's are skipped), reads the person's settings
 * fresh from the database (not the cache: a change on another node is seen
 * at once) and then either moves them to the end of a quiet that goes on, or
 * deletes them and queues the summary's receipts — committed together, so a
 * crash leaves either the held items (summarised by the next pass) or the
 * queued summary (sent by the outbox), never both and never neither.
 * Items whose inbox copy was read meanwhile (an answered prompt, a withdrawn
 * notification, the person reading the inbox) are not listed; when none is
 * left, nothing is sent.
 */
import { Clock, Context, Duration, Effect, Layer, Queue } from "effect"
import { DeviceTargeting } from "../identity/DeviceTargeting.ts"
import { alertMessage } from "../push/Alerts.ts"
import { Outbox } from "../push/Outbox.ts"
import { settingsOf } from "./QuietGate.ts"
import { QuietRepo } from "./QuietRepo.ts"
import type { ClaimedHeld } from "./QuietRepo.ts"
import { quietAt } from "./Schedule.ts"

/** Titles a summary lists before "and N more". */
export const SUMMARY_TITLES = 3
/** People summarised per pass. */
const PASS_PEOPLE = 100

/** The summary's text: how many items, the first titles. */
export const summaryText = (items: ReadonlyArray<Pick<ClaimedHeld, "title">>) => {
  const n = items.length
  const titles = items.slice(0, SUMMARY_TITLES).map((i) => i.title)
  const more = n - titles.length
  return {
    title: `${n} notification${n === 1 ? "" : "s"} during quiet hours`,
    body: `${titles.join(" · ")}${more > 0 ? ` and ${more} more` : ""}`
  }
}

export class Summaries extends Context.Service<Summaries, {
  /** Summarises every person whose held items are due; answers how many summaries were queued. */
  readonly pass: Effect.Effect<number>
  /** One iteration of the worker: a pass, then wait for a wake-up or `every`. */
  readonly loop: Effect.Effect<void>
  /** Tells this process's worker to pass now (a change ended someone's quiet). */
  readonly wake: Effect.Effect<void>
}>()("herald/Summaries") {
  static readonly layerNoDeps = (every: Duration.Input = "5 seconds") => Layer.effect(Summaries, Effect.gen(function*() {
    const repo = yield* QuietRepo
    const outbox = yield* Outbox
    const targeting = yield* DeviceTargeting
    const wakeups = yield* Queue.sliding<void>(1)

    const summarise = (userId: string, nowMs: number) =>
      repo.inTransaction(Effect.gen(function*() {
        const now = new Date(nowMs).toISOString()
        const items = yield* repo.claim(userId, now)
        if (items.length === 0) return 0
        const row = yield* repo.find(userId)
        const state = row === undefined ? undefined : quietAt(settingsOf(row), nowMs)
        if (state !== undefined && state.quiet) {
          yield* repo.release(userId, new Date(state.until!).toISOString())
          return 0
        }
        yield* repo.drop(userId, now)
        const unread = items.filter((i) => !i.read)
        if (unread.length === 0) return 0
        const devices = yield* targeting.activeOf([userId])
        const text = summaryText(unread)
        const id = `quiet:${userId}`
        const message = alertMessage({
          ref: "inbox",
          collapseId: id,
          title: text.title,
          body: text.body,
          url: null,
          imageUrl: null,
          threadId: null,
          data: { kind: "quiet-summary", count: String(unread.length) }
        })
        // `critical`: the quiet is over (just read from the database); a cache a moment behind must not hold it again.
        const receipts = yield* outbox.toDevices({ devices, origin: "notification", itemId: id, purpose: "alert", priority: "critical", message })
        return receipts.length > 0 ? 1 : 0
      }))

    const pass = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const users = yield* repo.dueUsers(new Date(now).toISOString(), PASS_PEOPLE)
      let queued = 0
      for (const userId of users) queued += yield* summarise(userId, now)
      if (queued > 0) yield* outbox.wake
      return queued
    }).pipe(Effect.withSpan("QuietSummaries.pass"))

    const loop = Effect.andThen(pass, Queue.take(wakeups).pipe(Effect.timeoutOption(every), Effect.asVoid))

    return Summaries.of({ pass, loop, wake: Queue.offer(wakeups, undefined).pipe(Effect.asVoid) })
  }))
}
