/**
 * A per-key rate limit of `limit` per minute as the generic cell rate
 * algorithm: one number per key (its theoretical arrival time), a burst of
 * the whole minute's budget, and a steady refill of one request every
 * `60 s / limit`. Synchronous, so check-and-take cannot interleave on a node.
 */

const MINUTE = 60_000

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

  /** What a request at `now` would get, and the state to commit if it is taken. */
  check(key: string, now: number): Decision & { readonly next: number } {
    const tat = Math.max(this.tat.get(key) ?? now, now)
    const next = tat + this.interval
    const allowAt = next - MINUTE
    if (allowAt > now) {
      return { allowed: false, limit: this.limit, remaining: 0, resetMs: tat - now, retryAfterMs: allowAt - now, next: tat }
    }
    return {
      allowed: true,
      limit: this.limit,
      remaining: Math.floor((now + MINUTE - next) / this.interval + 1e-9),
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
