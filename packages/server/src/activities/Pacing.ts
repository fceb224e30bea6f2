/**
 * The pacing rule shared by starts (per device, the same rule in SQL:
 * DevicePacing.ts) and routine updates (per device per activity, kept by the
 * activity's actor, which lives on one runner): after a send at `last`, the
 * next may go from `last + interval` on, exactly.
 */

/** When the next send may go: `now` when it may go now, else the first moment it may. */
export const nextSlot = (last: number | undefined, intervalMs: number, now: number): number =>
  last === undefined || now >= last + intervalMs ? now : last + intervalMs

/**
 * When the first of a routine update's devices may send, if none may now:
 * until then its actor need not read the queue, only be sure to wake by
 * then. `undefined` when one may send now; no devices, never.
 */
export const pacedUntil = (slots: ReadonlyArray<number>, now: number): number | undefined => {
  const first = Math.min(...slots)
  return first > now ? first : undefined
}
