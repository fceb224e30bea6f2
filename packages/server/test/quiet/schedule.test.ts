/**
 * Quiet-hours math (quiet/Schedule.ts) at fixed instants: windows crossing
 * midnight, joined stretches, mutes, and the on-call rotations' DST rules (a
 * window at 02:30 on a spring-forward day starts at 03:00; on a fall-back day
 * a repeated time is its first occurrence).
 */
import { assert, describe, it } from "@effect/vitest"
import type { QuietWindow } from "@herald/api"
import { coversWholeWeek, quietAt } from "../../src/quiet/Schedule.ts"
import { summaryText } from "../../src/quiet/Summaries.ts"
import type { QuietSettings } from "../../src/quiet/Schedule.ts"

const every: QuietWindow["days"] = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
const settings = (timeZone: string, windows: ReadonlyArray<QuietWindow>, extra: Partial<QuietSettings> = {}): QuietSettings => ({
  enabled: true,
  timeZone,
  windows,
  mode: "silent",
  mutedUntil: null,
  ...extra
})
const at = (iso: string) => Date.parse(iso)
const iso = (ms: number | null) => ms === null ? null : new Date(ms).toISOString()

describe("quiet hours schedule", () => {
  const nights = settings("Europe/Berlin", [{ days: every, start: "22:00", end: "07:00" }])

  it("a window crossing midnight is quiet from its start to the next morning, not in the day", () => {
    // Wednesday 2026-01-14, CET (UTC+1).
    assert.deepStrictEqual(quietAt(nights, at("2026-01-14T22:00:00Z")), { quiet: true, reason: "schedule", until: at("2026-01-15T06:00:00Z") })
    assert.deepStrictEqual(quietAt(nights, at("2026-01-15T05:59:00Z")), { quiet: true, reason: "schedule", until: at("2026-01-15T06:00:00Z") })
    assert.deepStrictEqual(quietAt(nights, at("2026-01-15T06:00:00Z")), { quiet: false, reason: null, until: null })
    assert.deepStrictEqual(quietAt(nights, at("2026-01-15T11:00:00Z")), { quiet: false, reason: null, until: null })
    assert.isFalse(quietAt(nights, at("2026-01-14T20:59:00Z")).quiet)
    assert.isTrue(quietAt(nights, at("2026-01-14T21:00:00Z")).quiet)
  })

  it("weeknights and all-day weekends join into one stretch: Friday night is quiet until Monday 07:00", () => {
    const weekend = settings("Europe/Berlin", [
      { days: every, start: "22:00", end: "07:00" },
      { days: ["sat", "sun"], start: "00:00", end: "24:00" }
    ])
    // Friday 2026-01-16 23:00 CET.
    assert.strictEqual(iso(quietAt(weekend, at("2026-01-16T22:00:00Z")).until), "2026-01-19T06:00:00.000Z")
    // Saturday noon, too.
    assert.strictEqual(iso(quietAt(weekend, at("2026-01-17T11:00:00Z")).until), "2026-01-19T06:00:00.000Z")
    // `start == end` is the whole day as well.
    const sameAsAllDay = settings("Europe/Berlin", [{ days: ["sat"], start: "00:00", end: "00:00" }])
    assert.deepStrictEqual(quietAt(sameAsAllDay, at("2026-01-17T11:00:00Z")), {
      quiet: true,
      reason: "schedule",
      until: at("2026-01-17T23:00:00Z")
    })
  })

  it("spring forward: a window at 02:30 starts at 03:00, the first valid instant after the gap", () => {
    // America/New_York, Sunday 2026-03-08: 02:00 EST jumps to 03:00 EDT (07:00Z).
    const early = settings("America/New_York", [{ days: every, start: "02:30", end: "06:00" }])
    assert.isFalse(quietAt(early, at("2026-03-08T06:59:59Z")).quiet)
    assert.deepStrictEqual(quietAt(early, at("2026-03-08T07:00:00Z")), { quiet: true, reason: "schedule", until: at("2026-03-08T10:00:00Z") })
    // The day before, the same window is 02:30 EST (07:30Z) to 06:00 EST (11:00Z).
    assert.isFalse(quietAt(early, at("2026-03-07T07:29:00Z")).quiet)
    assert.strictEqual(iso(quietAt(early, at("2026-03-07T07:30:00Z")).until), "2026-03-07T11:00:00.000Z")
  })

  it("fall back: a repeated time is its first occurrence, so the window is an hour longer that night", () => {
    // America/New_York, Sunday 2026-11-01: 02:00 EDT falls back to 01:00 EST (06:00Z).
    const late = settings("America/New_York", [{ days: every, start: "01:30", end: "05:00" }])
    // 01:30 EDT = 05:30Z starts it; 05:00 EST = 10:00Z ends it.
    assert.isFalse(quietAt(late, at("2026-11-01T05:29:00Z")).quiet)
    assert.strictEqual(iso(quietAt(late, at("2026-11-01T05:30:00Z")).until), "2026-11-01T10:00:00.000Z")
    // 01:10 EST, the second pass of the repeated hour, is inside the window already.
    assert.strictEqual(iso(quietAt(late, at("2026-11-01T06:10:00Z")).until), "2026-11-01T10:00:00.000Z")
    assert.isFalse(quietAt(late, at("2026-11-01T10:00:00Z")).quiet)
  })

  it("a mute is quiet whatever the schedule, and joins a window that begins before it ends", () => {
    const muted = { ...nights, mutedUntil: at("2026-01-14T21:30:00Z") }
    assert.deepStrictEqual(quietAt(muted, at("2026-01-14T12:00:00Z")), { quiet: true, reason: "mute", until: at("2026-01-15T06:00:00Z") })
    const short = { ...nights, mutedUntil: at("2026-01-14T13:00:00Z") }
    assert.deepStrictEqual(quietAt(short, at("2026-01-14T12:00:00Z")), { quiet: true, reason: "mute", until: at("2026-01-14T13:00:00Z") })
    // A disabled schedule leaves only the mute.
    const off = { ...muted, enabled: false }
    assert.deepStrictEqual(quietAt(off, at("2026-01-14T12:00:00Z")), { quiet: true, reason: "mute", until: at("2026-01-14T21:30:00Z") })
    assert.isFalse(quietAt({ ...nights, enabled: false }, at("2026-01-14T23:00:00Z")).quiet)
  })

  it("a schedule quiet all week is told apart from one that leaves time free", () => {
    assert.isTrue(coversWholeWeek([{ days: every, start: "00:00", end: "00:00" }]))
    assert.isTrue(coversWholeWeek([{ days: every, start: "07:00", end: "22:00" }, { days: every, start: "22:00", end: "07:00" }]))
    assert.isFalse(coversWholeWeek([{ days: every, start: "22:00", end: "07:00" }]))
    assert.isFalse(coversWholeWeek([{ days: ["mon", "tue", "wed", "thu", "fri", "sat"], start: "00:00", end: "24:00" }]))
    assert.isFalse(coversWholeWeek([]))
  })

  it("a summary names how many items and the first three titles", () => {
    assert.deepStrictEqual(summaryText([{ title: "A" }]), { title: "1 notification during quiet hours", body: "A" })
    assert.deepStrictEqual(summaryText(["A", "B", "C", "D", "E"].map((title) => ({ title }))), {
      title: "5 notifications during quiet hours",
      body: "A · B · C and 2 more"
    })
  })
})
