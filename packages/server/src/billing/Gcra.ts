/**
 * A per-key rate limit of `limit` per minute as the generic cell rate
 * algorithm: one number per key (its theoretical arrival time), a burst of
 * the whole minute's budget, and a steady refill of one request every
 * `60 s / limit`. Synchronous, so check-and-take cannot interleave on a node.
 */

const MINUTE = 60_000
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

export class Gcra {
  private readonly tat = new Map<string, number>()
  private readonly interval: number
  readonly limit: number

  constructor(limit: number) {
    this.limit = limit
    this.interval = MINUTE / limit
  }

  /**
   * What `cost` units at `now` would get (one request by default), and the
   * state to commit if they are taken: all of them or none. A cost above the
   * whole budget never fits; it is refused with `retryAfterMs` the time
   * until the budget is whole (the best it can ever be).
   */
  check(key: string, now: number, cost = 1): Decision & { readonly next: number } {
    const tat = Math.max(this.tat.get(key) ?? now, now)
    const next = tat + this.interval * cost
    const allowAt = next - MINUTE
    // `interval * limit` may exceed a minute by a rounding error: a whole budget must still fit.
    if (allowAt - now > EPSILON_MS) {
      const retryAfterMs = cost > this.limit ? tat - now : allowAt - now
      return { allowed: false, limit: this.limit, remaining: 0, resetMs: tat - now, retryAfterMs, next: tat }
    }
    return {
      allowed: true,
      limit: this.limit,
      remaining: Math.max(0, Math.floor((now + MINUTE - next) / this.interval + 1e-9)),
      resetMs: next - now,
      retryAfterMs: 0,
      next
    }
  }

  commit(key: string, next: number): void {
    this.tat.set(key, next)
  }

  /** The budget left at `now` without taking any. */
  peek(key: string, now: number): Decision {
    const tat = Math.max(this.tat.get(key) ?? now, now)
    return {
      allowed: tat - now <= MINUTE - this.interval,
      limit: this.limit,
      remaining: Math.floor((now + MINUTE - tat) / this.interval + 1e-9),
      resetMs: tat - now,
      retryAfterMs: 0
    }
  }

  /** Forgets keys whose budget is whole again (they behave exactly like new keys). */
  sweep(now: number): void {
    for (const [key, tat] of this.tat) if (tat <= now) this.tat.delete(key)
  }

  get size(): number {
    return this.tat.size
  }
}
