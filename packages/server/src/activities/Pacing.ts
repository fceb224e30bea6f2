/**
 * The pacing rule shared by starts (per device) and routine updates (per
 * device per activity): after a send at `last`, the next may go from
 * `last + interval` on, exactly.
 */

/** When the next send may go: `now` when it may go now, else the first moment it may. */
export const nextSlot = (last: number | undefined, intervalMs: number, now: number): number =>
  last === undefined || now >= last + intervalMs ? now : last + intervalMs

/**
 * Whether a routine update may leave the queue alone: none of its devices
 * (their next slots) may send now, and the pending wake-up fires no later
 * than the first of them may. With no devices there is nothing to send.
 */
export const coveredByWakeUp = (slots: ReadonlyArray<number>, now: number, wakeUpAt: number): boolean => {
  const first = Math.min(...slots)
  return first > now && wakeUpAt <= first
}
