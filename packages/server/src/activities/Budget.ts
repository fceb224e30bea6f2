/**
 * The milestone budget of a live activity (spec Limits): `priority: high`
 * is granted at most 4 times per rolling minute and 20 per rolling hour. A
 * grant at time t counts while `now - t < window`, so the 5th milestone
 * within one minute of the 1st is refused, and allowed from exactly one
 * minute after it.
 */
export const MILESTONES_PER_MINUTE = 4
export const MILESTONES_PER_HOUR = 20
const MINUTE = 60_000
const HOUR = 3_600_000

/** Whether one more milestone fits, given earlier grant times (epoch ms). */
export const milestoneAllowed = (grants: ReadonlyArray<number>, now: number): boolean => {
  let minute = 0
  let hour = 0
  for (const t of grants) {
    if (now - t < HOUR) hour++
    if (now - t < MINUTE) minute++
  }
  return minute < MILESTONES_PER_MINUTE && hour < MILESTONES_PER_HOUR
}

/** The grants still inside the hour window (what must be remembered). */
export const liveGrants = (grants: ReadonlyArray<number>, now: number): ReadonlyArray<number> =>
  grants.filter((t) => now - t < HOUR)
