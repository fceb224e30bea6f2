/**
 * The pacing rule shared by starts (per device) and routine updates (per
 * device per activity): after a send at `last`, the next may go from
 * `last + interval` on, exactly.
 */

/** When the next send may go: `now` when it may go now, else the first moment it may. */
export const nextSlot = (last: number | undefined, intervalMs: number, now: number): number =>
  last === undefined || now >= last + intervalMs ? now : last + intervalMs
