/**
 * Rotation math for on-call groups: pure functions over epoch milliseconds, no services.
 *
 * Shift k of a rotation covers [H_k, H_{k+1}) and belongs to `members[k mod n]`. H_0 = `startsAt`;
 * the later hand-offs fall on the local calendar days (in `timezone`) counted from the local date of
 * `startsAt`, one period apart, at the `handoffAt` wall-clock time. H_1 is the first such hand-off
 * strictly after `startsAt`: when the hand-off on the date of `startsAt` is not after it, the sequence
 * shifts by one period, so the first shift is at most one period long (it may be short).
 *
 * All time-zone arithmetic goes through Effect's zoned `DateTime` (the platform's IANA database):
 * - a DST day still hands off at the same wall-clock time, so that shift is 23 or 25 hours long
 *   (23.5 or 24.5 in Australia/Lord_Howe);
 * - a hand-off time inside a spring-forward gap happens at the first valid instant after the gap
 *   (02:30 on a day when 02:00 jumps to 03:00 hands off at 03:00);
 * - a hand-off time that occurs twice (fall back) hands off at its first occurrence.
 *
 * Overrides win over the rotation for their window: the rotation shift they land in is cut around
 * them. Where overrides overlap, the one later in the array wins; callers pass them in creation
 * order, so the most recently created override holds the overlap, and an earlier override resumes
 * after a later one inside it ends (the same override id may then appear in two shifts). Overrides
 * apply even before `startsAt` or when the rotation has no members: they name a person outright.
 * Overrides with `endsAt <= startsAt` are ignored. A rotation whose timezone or `handoffAt` cannot be
 * read has no rotation shifts (only overrides); groups are validated with `isValidTimezone` on input.
 */
import { DateTime, Option } from "effect"

export interface RotationSpec {
  /** userIds in order */
  readonly members: ReadonlyArray<string>
  readonly period: "daily" | "weekly"
  /** "HH:MM" local wall-clock time of the hand-off */
  readonly handoffAt: string
  /** IANA zone */
  readonly timezone: string
  readonly startsAt: number
}

export interface OverrideSpec {
  readonly id: string
  readonly userId: string
  readonly startsAt: number
  readonly endsAt: number
}

export interface Shift {
  readonly userId: string
  readonly startsAt: number
  readonly endsAt: number
  readonly overrideId?: string
}

const DAY_MS = 86_400_000
const HANDOFF = /^([01]\d|2[0-3]):([0-5]\d)$/u
const IANA_NAME = /^[A-Za-z][A-Za-z0-9_+\-/]*$/u

/**
 * Whether `timezone` is an IANA zone name the runtime knows (as Effect's `DateTime.zoneMakeNamed` reads
 * it). Bare offsets such as "+05:30" are refused: some runtimes accept them, but they have no DST rules.
 */
export const isValidTimezone = (timezone: string): boolean =>
  IANA_NAME.test(timezone) && Option.isSome(DateTime.zoneMakeNamed(timezone))

/** A rotation made ready for arithmetic; hand-off instants are memoised for one call. */
interface Plan {
  readonly members: ReadonlyArray<string>
  readonly zone: DateTime.TimeZone.Named
  readonly hour: number
  readonly minute: number
  /** Days per period. */
  readonly step: number
  /** Local calendar day (days since 1970-01-01) of `startsAt`. */
  readonly day0: number
  /** 0 when the hand-off on the date of `startsAt` is after it (it is H_1), else 1. */
  readonly skip: number
  readonly startsAt: number
  readonly handoffs: Map<number, number>
}

/** The local wall clock of an instant in a zone, as "UTC" milliseconds (for comparing wall times). */
export const wallClock = (at: number, zone: DateTime.TimeZone.Named): number => {
  const p = DateTime.toParts(DateTime.makeZonedUnsafe(at, { timeZone: zone }))
  return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute, p.second, p.millisecond)
}

/** The local calendar day (days since the epoch) of an instant in a zone. */
export const localDay = (at: number, zone: DateTime.TimeZone.Named): number => Math.floor(wallClock(at, zone) / DAY_MS)

/** The instant of `hour:minute` local time on local calendar day `day` (DST rules above; quiet hours use it too). */
export const handoffOn = (zone: DateTime.TimeZone.Named, day: number, hour: number, minute: number): number => {
  const date = new Date(day * DAY_MS)
  const parts = { year: date.getUTCFullYear(), month: date.getUTCMonth() + 1, day: date.getUTCDate(), hour, minute }
  const wanted = Date.UTC(parts.year, parts.month - 1, parts.day, hour, minute)
  // "earlier" takes the first occurrence of a repeated (fall-back) time.
  const earlier = DateTime.toEpochMillis(
    DateTime.makeZonedUnsafe(parts, { timeZone: zone, adjustForTimeZone: true, disambiguation: "earlier" })
  )
  if (wallClock(earlier, zone) === wanted) return earlier
  // In a gap: "earlier" lands before it and "later" after it; the first valid instant after the gap
  // is the transition itself, the first instant whose wall clock is not before the wanted time.
  let low = earlier
  let high = DateTime.toEpochMillis(
    DateTime.makeZonedUnsafe(parts, { timeZone: zone, adjustForTimeZone: true, disambiguation: "later" })
  )
  if (high <= low || wallClock(high, zone) < wanted) return Math.max(low, high)
  while (high - low > 1) {
    const mid = low + Math.floor((high - low) / 2)
    if (wallClock(mid, zone) >= wanted) high = mid
    else low = mid
  }
  return high
}

const planOf = (rotation: RotationSpec): Plan | undefined => {
  if (rotation.members.length === 0 || !Number.isFinite(rotation.startsAt)) return undefined
  const match = HANDOFF.exec(rotation.handoffAt)
  if (match === null || !isValidTimezone(rotation.timezone)) return undefined
  const zone = DateTime.zoneMakeNamedUnsafe(rotation.timezone)
  const hour = Number(match[1])
  const minute = Number(match[2])
  const day0 = localDay(rotation.startsAt, zone)
  return {
    members: rotation.members,
    zone,
    hour,
    minute,
    step: rotation.period === "weekly" ? 7 : 1,
    day0,
    skip: handoffOn(zone, day0, hour, minute) > rotation.startsAt ? 0 : 1,
    startsAt: rotation.startsAt,
    handoffs: new Map()
  }
}

/** H_k: the instant shift k starts. */
const handoff = (plan: Plan, k: number): number => {
  if (k <= 0) return plan.startsAt
  const known = plan.handoffs.get(k)
  if (known !== undefined) return known
  const at = handoffOn(plan.zone, plan.day0 + (k - 1 + plan.skip) * plan.step, plan.hour, plan.minute)
  plan.handoffs.set(k, at)
  return at
}

/**
 * The index of the rotation shift covering `at`, or undefined before `startsAt`. Estimated from the
 * local day count, then corrected by at most a step or two around the hand-off time of the day.
 */
const shiftIndexAt = (plan: Plan, at: number): number | undefined => {
  if (at < plan.startsAt) return undefined
  const periods = Math.floor((localDay(at, plan.zone) - plan.day0) / plan.step)
  let k = Math.max(0, periods + 1 - plan.skip)
  while (k > 0 && handoff(plan, k) > at) k--
  while (handoff(plan, k + 1) <= at) k++
  return k
}

const memberOf = (plan: Plan, k: number): string => plan.members[k % plan.members.length] as string

type Segment = { readonly shift: Shift } | { readonly nobodyUntil: number | undefined }

/** Who holds `at` and for which window: the winning override, else the (cut) rotation shift. */
const segmentAt = (plan: Plan | undefined, overrides: ReadonlyArray<OverrideSpec>, at: number): Segment => {
  for (let i = overrides.length - 1; i >= 0; i--) {
    const o = overrides[i] as OverrideSpec
    if (o.startsAt > at || at >= o.endsAt) continue
    let startsAt = o.startsAt
    let endsAt = o.endsAt
    // Only later overrides beat this one: one that ended inside it started this stretch, one that
    // starts inside it ends this stretch.
    for (const later of overrides.slice(i + 1)) {
      if (later.endsAt <= at && later.endsAt > startsAt) startsAt = later.endsAt
      if (later.startsAt > at && later.startsAt < endsAt) endsAt = later.startsAt
    }
    return { shift: { userId: o.userId, startsAt, endsAt, overrideId: o.id } }
  }
  const k = plan === undefined ? undefined : shiftIndexAt(plan, at)
  if (plan === undefined || k === undefined) {
    let next = plan !== undefined && plan.startsAt > at ? plan.startsAt : Infinity
    for (const o of overrides) if (o.startsAt > at && o.startsAt < next) next = o.startsAt
    return { nobodyUntil: Number.isFinite(next) ? next : undefined }
  }
  let startsAt = handoff(plan, k)
  let endsAt = handoff(plan, k + 1)
  for (const o of overrides) {
    if (o.endsAt <= at && o.endsAt > startsAt) startsAt = o.endsAt
    if (o.startsAt > at && o.startsAt < endsAt) endsAt = o.startsAt
  }
  return { shift: { userId: memberOf(plan, k), startsAt, endsAt } }
}

const validOverrides = (overrides: ReadonlyArray<OverrideSpec>): ReadonlyArray<OverrideSpec> =>
  overrides.filter((o) => Number.isFinite(o.startsAt) && Number.isFinite(o.endsAt) && o.startsAt < o.endsAt)

/** Shifts from the one covering `at` (first, if anyone is on call then) onwards, `count` of them, overrides spliced in. */
export const shiftsFrom = (
  rotation: RotationSpec,
  overrides: ReadonlyArray<OverrideSpec>,
  at: number,
  count: number
): ReadonlyArray<Shift> => {
  const plan = planOf(rotation)
  const valid = validOverrides(overrides)
  const shifts: Array<Shift> = []
  let cursor = at
  while (shifts.length < count) {
    const segment = segmentAt(plan, valid, cursor)
    if ("shift" in segment) {
      shifts.push(segment.shift)
      cursor = segment.shift.endsAt
    } else if (segment.nobodyUntil === undefined) {
      break
    } else {
      cursor = segment.nobodyUntil
    }
  }
  return shifts
}

/** Who is on call at `at` (an override wins for its window); undefined before `startsAt` or with no members. */
export const onCallAt = (
  rotation: RotationSpec,
  overrides: ReadonlyArray<OverrideSpec>,
  at: number
): Shift | undefined => {
  const segment = segmentAt(planOf(rotation), validOverrides(overrides), at)
  return "shift" in segment ? segment.shift : undefined
}

/** The rotation member after the one on rotation-duty at `at` (the `next` escalation target), ignoring overrides. */
export const nextAfter = (rotation: RotationSpec, at: number): string | undefined => {
  const plan = planOf(rotation)
  const k = plan === undefined ? undefined : shiftIndexAt(plan, at)
  return plan === undefined || k === undefined ? undefined : memberOf(plan, k + 1)
}
