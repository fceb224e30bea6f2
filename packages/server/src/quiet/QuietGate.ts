/**
 * The one place quiet hours apply to pushes: `Outbox.enqueue` hands every
 * push to `apply` before writing it. A push breaks through when it is not an
 * alert (withdraw commands), a page, or of priority `critical` (which callers
 * set for urgent prompts, their reminders and page-like alerts); otherwise,
 * while its person is quiet, it is made silent (push/Alerts.ts `quietAlert`)
 * or held: not sent, its item written to `quiet_held` in the caller's unit
 * of work, summarised when the quiet ends (Summaries.ts).
 *
 * Why a cache: sends are the benchmarked hot path and must not spend a
 * statement on this. Each process keeps every person's settings in memory —
 * one small row per person who set quiet hours, read whole at start — and
 * re-reads a person's row when it changes: directly after a change made here
 * (`refresh`), and on PostgreSQL through `NOTIFY herald_quiet` for changes
 * made by other processes (`listen`, a worker, which reloads everything each
 * time its connection is (re)established, so a notification missed while
 * disconnected costs nothing). The decision itself is arithmetic on the
 * cached row and the clock. On the embedded database there is one process.
 */
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Queue } from "effect"
import { makeId } from "../lib/Ids.ts"
import { quietAlert } from "../push/Alerts.ts"
import type { NewPush } from "../push/Outbox.ts"
import { QUIET_CHANNEL, QuietRepo } from "./QuietRepo.ts"
import type { HeldRow, SettingsRow } from "./QuietRepo.ts"
import { defaultSettings, quietAt } from "./Schedule.ts"
import type { QuietSettings } from "./Schedule.ts"

/** The prefix of the ids `Outbox.enqueue` answers for held pushes (no receipt exists: nothing to send). */
export const HELD_PREFIX = "held:"

/** What `apply` made of the pushes: each to write (possibly silenced) or held, in the caller's order. */
export type Gated = ReadonlyArray<{ readonly push: NewPush } | { readonly heldId: string }>

export const settingsOf = (row: SettingsRow): QuietSettings => ({
  enabled: row.enabled,
  timeZone: row.timeZone,
  windows: row.windows,
  mode: row.mode,
  mutedUntil: row.mutedUntil === null ? null : Date.parse(row.mutedUntil)
})

const titleOf = (push: NewPush): string =>
  push.message.fcm.notification?.title ??
    ((push.message.apns.aps as { alert?: { title?: string } } | undefined)?.alert?.title ?? "")

/** Whether a push is exempt from quiet hours (decided here only). */
export const breaksThrough = (push: NewPush): boolean =>
  push.purpose !== "alert" || push.origin === "page" || push.priority === "critical"

export class QuietGate extends Context.Service<QuietGate, {
  /** Applies quiet hours at `now` (epoch ms); writes held items through the caller's unit of work. */
  readonly apply: (pushes: ReadonlyArray<NewPush>, now: number) => Effect.Effect<Gated>
  /** The person's cached settings (the defaults when none are set). */
  readonly settings: (userId: string) => QuietSettings
  /** Re-reads the person's row into this process's cache (after a change made here). */
  readonly refresh: (userId: string) => Effect.Effect<void>
  /** Whether other processes' changes arrive by NOTIFY: false on the embedded database (one process). */
  readonly enabled: boolean
  /** Listens for other processes' changes; reloads everything once listening. Ends only when the connection fails. */
  readonly listen: Effect.Effect<void, unknown>
}>()("herald/QuietGate") {
  static readonly layerNoDeps = Layer.effect(QuietGate, Effect.gen(function*() {
    const repo = yield* QuietRepo
    const pg = yield* PgClient.PgClient
    const cache = new Map<string, QuietSettings>()

    const reload = Effect.map(repo.all, (rows) => {
      cache.clear()
      for (const row of rows) cache.set(row.userId, settingsOf(row))
    })
    const refresh = (userId: string) =>
      Effect.map(repo.find(userId), (row) => {
        if (row === undefined) cache.delete(userId)
        else cache.set(userId, settingsOf(row))
      })
    yield* reload

    const settings = (userId: string) => cache.get(userId) ?? defaultSettings

    const apply = (pushes: ReadonlyArray<NewPush>, now: number) =>
      Effect.gen(function*() {
        // Nobody quiet (the common case): the pushes as they are, no allocation per push.
        if (cache.size === 0) return pushes.map((push) => ({ push }))
        const out: Array<{ readonly push: NewPush } | { readonly heldId: string }> = []
        const held = new Map<string, HeldRow>()
        for (const push of pushes) {
          const own = cache.get(push.userId)
          const state = own === undefined || breaksThrough(push) ? undefined : quietAt(own, now)
          if (state === undefined || !state.quiet) {
            out.push({ push })
          } else if (own!.mode === "silent") {
            out.push({ push: { ...push, message: quietAlert(push.message) } })
          } else {
            out.push({ heldId: `${HELD_PREFIX}${yield* makeId("rcp")}` })
            held.set(`${push.userId} ${push.origin} ${push.itemId}`, {
              userId: push.userId,
              origin: push.origin,
              itemId: push.itemId,
              title: titleOf(push),
              releaseAt: new Date(state.until!).toISOString()
            })
          }
        }
        if (held.size > 0) yield* repo.hold([...held.values()])
        return out
      })

    const listen = Effect.scoped(Effect.gen(function*() {
      const changes = yield* pg.listen(QUIET_CHANNEL)
      // Listening first, then reading: no change falls between the two.
      yield* reload
      return yield* Effect.forever(Effect.flatMap(Queue.take(changes), ({ payload }) => refresh(payload)))
    }))

    return QuietGate.of({ apply, settings, refresh, enabled: pg.config.path === undefined, listen })
  }))

  static readonly layer = QuietGate.layerNoDeps.pipe(Layer.provide(QuietRepo.layer))
}
