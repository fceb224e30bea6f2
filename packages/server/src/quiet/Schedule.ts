/**
 * Quiet-hours math: pure functions over epoch milliseconds, no services.
 *
 * A window `{days, start, end}` is quiet from `start` on each of `days` (local
 * wall-clock time in the person's zone) until `end` the same day, or the next
 * day when `end` is not after `start` (`start == end`, or `00:00`–`24:00`: the
 * whole day). Local times become instants exactly as on-call hand-offs do
 * (oncall/Rotation.ts `handoffOn`): a time inside a spring-forward gap is the
 * first valid instant after it, a time that occurs twice is its first
 * occurrence. A mute covers [now, mutedUntil) whatever the schedule.
 *
 * "Until" is the end of the whole quiet stretch: a mute and the windows that
 * follow on from it without a gap are joined (Friday 22:00–07:00 then all of
 * Saturday reads "until Sunday 07:00" when Saturday's window starts at 07:00).
 */
import type { QuietWindow, Weekday } from "@herald/api"
import { DateTime } from "effect"
import { handoffOn, isValidTimezone, localDay } from "../oncall/Rotation.ts"

export interface QuietSettings {
  readonly enabled: boolean
  readonly timeZone: string
  readonly windows: ReadonlyArray<QuietWindow>
  readonly mode: "silent" | "hold"
  /** Epoch milliseconds; null when not muted. */
  readonly mutedUntil: number | null
}

export const defaultSettings: QuietSettings = { enabled: false, timeZone: "UTC", windows: [], mode: "silent", mutedUntil: null }

export interface QuietNow {
  readonly quiet: boolean
  readonly reason: "mute" | "schedule" | null
  /** When the quiet stretch ends (epoch ms); null when not quiet. */
  readonly until: number | null
}

const notQuiet: QuietNow = { quiet: false, reason: null, until: null }

// Day 0 (1970-01-01) was a Thursday.
const WEEK: ReadonlyArray<Weekday> = ["thu", "fri", "sat", "sun", "mon", "tue", "wed"]
const weekdayOf = (day: number): Weekday => WEEK[((day % 7) + 7) % 7]!
const DAY_INDEX: Record<Weekday, number> = { mon: 0, tue: 1, wed: 2, thu: 3, fri: 4, sat: 5, sun: 6 }

const minutesOf = (hhmm: string): number => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5))

/** How long a window lasts in wall-clock minutes (1..1440). */
const spanOf = (w: QuietWindow): number => {
  const start = minutesOf(w.start)
  const end = minutesOf(w.end)
  return end > start ? end - start : end - start + 1440
}

/** The instants [start, end) of the window instances starting on local day `day`. */
const instancesOn = (zone: DateTime.TimeZone.Named, windows: ReadonlyArray<QuietWindow>, day: number) => {
  const weekday = weekdayOf(day)
  const out: Array<readonly [number, number]> = []
  for (const w of windows) {
    if (!w.days.includes(weekday)) continue
    const start = minutesOf(w.start)
    const endWall = start + spanOf(w)
    const endDay = day + Math.floor(endWall / 1440)
    const endMinute = endWall % 1440
    out.push([
      handoffOn(zone, day, Math.floor(start / 60), start % 60),
      handoffOn(zone, endDay, Math.floor(endMinute / 60), endMinute % 60)
    ])
  }
  return out
}

/** The end of the schedule's window instance(s) covering `at`, or undefined when none does. */
const windowEndAt = (settings: QuietSettings, zone: DateTime.TimeZone.Named, at: number): number | undefined => {
  const day = localDay(at, zone)
  let end: number | undefined
  // A window lasts at most a day: only those starting yesterday or today can cover `at`.
  for (const d of [day - 1, day]) {
    for (const [s, e] of instancesOn(zone, settings.windows, d)) {
      if (s <= at && at < e && (end === undefined || e > end)) end = e
    }
  }
  return end
}

/** Stretches joined at most this far ahead (a schedule quiet all week is refused on input). */
const HORIZON_MS = 15 * 86_400_000

/** Whether the person is quiet at `at`, why, and until when. */
export const quietAt = (settings: QuietSettings, at: number): QuietNow => {
  const zone = settings.enabled && settings.windows.length > 0 && isValidTimezone(settings.timeZone)
    ? DateTime.zoneMakeNamedUnsafe(settings.timeZone)
    : undefined
  const muted = settings.mutedUntil !== null && settings.mutedUntil > at
  const scheduled = zone === undefined ? undefined : windowEndAt(settings, zone, at)
  if (!muted && scheduled === undefined) return notQuiet
  let until = Math.max(muted ? settings.mutedUntil! : at, scheduled ?? at)
  while (zone !== undefined && until - at < HORIZON_MS) {
    const next = windowEndAt(settings, zone, until)
    if (next === undefined || next <= until) break
    until = next
  }
  return { quiet: true, reason: muted ? "mute" : "schedule", until }
}

/**
 * Whether the windows leave no minute of the week un-quiet (in wall-clock
 * terms): such a schedule would hold pushes for good, so it is refused.
 */
export const coversWholeWeek = (windows: ReadonlyArray<QuietWindow>): boolean => {
  const week = 7 * 1440
  const covered = new Uint8Array(week)
  for (const w of windows) {
    const start = minutesOf(w.start)
    const span = spanOf(w)
    for (const day of new Set(w.days)) {
      const from = DAY_INDEX[day] * 1440 + start
      for (let m = 0; m < span; m++) covered[(from + m) % week] = 1
    }
  }
  return covered.every((c) => c === 1)
}
