/**
 * A per-key rate limit of `limit` per minute as the generic cell rate
 * algorithm: one number per key (its theoretical arrival time), a burst of
 * the whole minute's budget, and a steady refill of one request every
 * `60 s / limit`. Synchronous, so check-and-take cannot interleave on a node.
 * The arithmetic is exported for the budgets kept in the database
 * (SharedRateLimits.ts), which store the same number per key.
 */

export const MINUTE = 60_000
const EPSILON_MS = 1e-6

export interface Decision {
  readonly allowed: boolean
  readonly limit: number
  readonly remaining: number
  /** Milliseconds until the budget is whole again. */
  readonly resetMs: number
  /** Milliseconds until a request would be allowed (0 when allowed). */
  readonly retryAfterMs: number
}

/**
 * What `cost` units at `now` would get against a key whose theoretical
 * arrival time is `stored` (undefined: a key never seen, or swept), and the
 * time to store if they are taken: all of them or none. A cost above the
 * whole budget never fits; it is refused with `retryAfterMs` the time until
 * the budget is whole (the best it can ever be).
 */
export const decide = (
  limit: number,
  stored: number | undefined,
  now: number,
  cost: number
): Decision & { readonly next: number } => {
  const interval = MINUTE / limit
  const tat = Math.max(stored ?? now, now)
  const next = tat + interval * cost
  const allowAt = next - MINUTE
  // `interval * limit` may exceed a minute by a rounding error: a whole budget must still fit.
  if (allowAt - now > EPSILON_MS) {
    const retryAfterMs = cost > limit ? tat - now : allowAt - now
    return { allowed: false, limit, remaining: 0, resetMs: tat - now, retryAfterMs, next: tat }
  }
  return taken(limit, next, now)
}

/** The decision of units taken at `now` that moved the key's time to `next`. */
export const taken = (limit: number, next: number, now: number): Decision & { readonly next: number } => ({
  allowed: true,
  limit,
  remaining: Math.max(0, Math.floor((now + MINUTE - next) / (MINUTE / limit) + 1e-9)),
  resetMs: next - now,
  retryAfterMs: 0,
  next
})

/** The budget left at `now` for a key whose stored time is `stored`, without taking any. */
export const peekAt = (limit: number, stored: number | undefined, now: number): Decision => {
  const interval = MINUTE / limit
  const tat = Math.max(stored ?? now, now)
  return {
    allowed: tat - now <= MINUTE - interval,
    limit,
    remaining: Math.floor((now + MINUTE - tat) / interval + 1e-9),
    resetMs: tat - now,
    retryAfterMs: 0
  }
}

export class Gcra {
  private readonly tat = new Map<string, number>()
  readonly limit: number

  constructor(limit: number) {
    this.limit = limit
  }

  /** What `cost` units at `now` would get (one request by default), and the state to commit if taken (`decide`). */
  check(key: string, now: number, cost = 1): Decision & { readonly next: number } {
    return decide(this.limit, this.tat.get(key), now, cost)
  }

  commit(key: string, next: number): void {
    this.tat.set(key, next)
  }

  /** The budget left at `now` without taking any. */
  peek(key: string, now: number): Decision {
    return peekAt(this.limit, this.tat.get(key), now)
  }

  /** Forgets keys whose budget is whole again (they behave exactly like new keys). */
  sweep(now: number): void {
    for (const [key, tat] of this.tat) if (tat <= now) this.tat.delete(key)
  }

  get size(): number {
    return this.tat.size
  }
}
