/**
 * Quiet hours' rules for the Person API: read, set the weekly schedule, mute
 * and unmute. Every change refreshes this process's cache at once (others
 * hear of it by NOTIFY, quiet/QuietGate.ts) and moves the person's held items
 * to the end of the quiet as it now stands — now, when the change ended it,
 * and then the summary worker is woken.
 */
import { QuietHours as QuietHoursRecord, QuietHoursState, ValidationFailed } from "@herald/api"
import type { PutQuietHoursRequest } from "@herald/api"
import { Clock, Context, Effect, Layer } from "effect"
import { isValidTimezone } from "../oncall/Rotation.ts"
import { QuietGate } from "./QuietGate.ts"
import { QuietRepo } from "./QuietRepo.ts"
import { coversWholeWeek, quietAt } from "./Schedule.ts"
import { Summaries } from "./Summaries.ts"

const invalid = (path: string, message: string) => new ValidationFailed({ error: `Invalid ${path}: ${message}.`, issues: [{ path, message }] })

export class QuietHours extends Context.Service<QuietHours, {
  readonly get: (userId: string) => Effect.Effect<QuietHoursRecord>
  readonly put: (userId: string, input: PutQuietHoursRequest) => Effect.Effect<QuietHoursRecord, ValidationFailed>
  readonly mute: (userId: string, hours: number) => Effect.Effect<QuietHoursRecord>
  readonly unmute: (userId: string) => Effect.Effect<QuietHoursRecord>
}>()("herald/QuietHours") {
  static readonly layerNoDeps = Layer.effect(QuietHours, Effect.gen(function*() {
    const repo = yield* QuietRepo
    const gate = yield* QuietGate
    const summaries = yield* Summaries

    const recordOf = (userId: string) =>
      Effect.gen(function*() {
        const settings = gate.settings(userId)
        const now = yield* Clock.currentTimeMillis
        const state = quietAt(settings, now)
        return new QuietHoursRecord({
          enabled: settings.enabled,
          timeZone: settings.timeZone,
          windows: settings.windows,
          mode: settings.mode,
          mutedUntil: settings.mutedUntil !== null && settings.mutedUntil > now ? new Date(settings.mutedUntil).toISOString() : null,
          current: new QuietHoursState({
            quiet: state.quiet,
            reason: state.reason,
            until: state.until === null ? null : new Date(state.until).toISOString(),
            held: yield* repo.heldCount(userId)
          })
        })
      })

    /** After a change: the cache, then the held items' release at the end of the quiet as it now stands. */
    const changed = (userId: string) =>
      Effect.gen(function*() {
        yield* gate.refresh(userId)
        const now = yield* Clock.currentTimeMillis
        const state = quietAt(gate.settings(userId), now)
        yield* repo.release(userId, new Date(state.until ?? now).toISOString())
        if (!state.quiet) yield* summaries.wake
        return yield* recordOf(userId)
      })

    const put = Effect.fn("QuietHours.put")(function*(userId: string, input: PutQuietHoursRequest) {
      if (!isValidTimezone(input.timeZone)) {
        return yield* invalid("timeZone", "Expected an IANA time-zone name such as Europe/Berlin")
      }
      for (const [i, w] of input.windows.entries()) {
        if (new Set(w.days).size !== w.days.length) return yield* invalid(`windows[${i}].days`, "Expected each day at most once")
      }
      if (coversWholeWeek(input.windows)) {
        return yield* invalid("windows", "The windows cover the whole week: leave some time un-quiet, or mute for some hours")
      }
      yield* repo.put({ userId, enabled: input.enabled ?? true, timeZone: input.timeZone, windows: input.windows, mode: input.mode })
      return yield* changed(userId)
    })

    const mute = Effect.fn("QuietHours.mute")(function*(userId: string, hours: number) {
      const now = yield* Clock.currentTimeMillis
      yield* repo.setMute(userId, new Date(now + hours * 3_600_000).toISOString())
      return yield* changed(userId)
    })

    const unmute = Effect.fn("QuietHours.unmute")(function*(userId: string) {
      yield* repo.setMute(userId, null)
      return yield* changed(userId)
    })

    return QuietHours.of({ get: recordOf, put, mute, unmute })
  }))
}
