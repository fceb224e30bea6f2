/**
 * Rate limits per token (and per webhook service, for its inbound URL): a
 * GCRA budget a minute per key (Gcra.ts), taken all or none, so concurrent
 * requests can never both take the last unit.
 *
 * Where the budgets live:
 * - On PostgreSQL, in the database (SharedRateLimits.ts, RateLimitRepo.ts):
 *   every node takes from the same budget, so N nodes behind a balancer
 *   accept the limit, not N times it. A counted request costs at most one
 *   statement, shared with the node's concurrent ones (docs/limits.md gives
 *   the measured cost).
 * - On the embedded database (one process by construction), in memory: no
 *   round trip at all.
 * Either way keys whose budgets are whole again are swept every minute (a
 * worker, `runtime/Workers.ts`), so what is kept follows the keys active in
 * the last minute.
 */
import { Clock, Context, Duration, Effect, Layer } from "effect"
import { PgClient } from "@effect/sql-pg"
import { RateLimitConfig } from "../config/RateLimitConfig.ts"
import { Gcra } from "./Gcra.ts"
import type { Decision } from "./Gcra.ts"
import { RateLimitRepo } from "./RateLimitRepo.ts"
import { makeSharedRateLimiter } from "./SharedRateLimits.ts"

export type { Decision } from "./Gcra.ts"

export interface RateLimitOutcome {
  readonly allowed: boolean
  /** The limit the response reports: the tighter of those that apply (none when every limit is off). */
  readonly reported: Decision | undefined
  /** Which budget refused (when not allowed). */
  readonly refused?: "requests" | "sends"
}

/** Units taken at once: requests against the token's request budget, sends against its send budget. */
export interface Units {
  readonly requests: number
  readonly sends: number
}

export interface RateLimiterShape {
  /** Takes one request (and one send when `sends`) for the token at `now`, or refuses it whole. */
  readonly take: (tokenId: string, sends: boolean, now: number) => Effect.Effect<RateLimitOutcome>
  /**
   * Takes `units` for the token at `now`, all of them or none (an MCP batch:
   * one request per message, one send per sending call).
   */
  readonly takeUnits: (tokenId: string, units: Units, now: number) => Effect.Effect<RateLimitOutcome>
  /** Takes one send only (an inbound delivery, keyed by its service); allowed whenever the send limit is off. */
  readonly takeSend: (key: string, now: number) => Effect.Effect<RateLimitOutcome>
  /** The token's budgets at `now`, without taking any; undefined for a limit that is off. */
  readonly peek: (tokenId: string, now: number) => Effect.Effect<{ readonly requests: Decision | undefined; readonly sends: Decision | undefined }>
  /** Forgets keys whose budget is whole again; a worker runs it every `sweepEvery`. */
  readonly sweep: Effect.Effect<void>
  readonly sweepEvery: Duration.Duration
}

/**
 * Where the budgets live: by the database (`auto`: PostgreSQL shared, the
 * embedded database in memory), or pinned. Read when the limiter is built;
 * tests pin `database` to run the shared budgets on the embedded database too.
 */
export const RateLimitStore = Context.Reference<"auto" | "database" | "memory">("herald/RateLimitStore", {
  defaultValue: () => "auto"
})

const tighter = (a: Decision | undefined, b: Decision | undefined) =>
  a === undefined ? b : b === undefined ? a : b.remaining < a.remaining ? b : a

export const makeRateLimiter = (config: { readonly requestsPerMinute: number; readonly sendsPerMinute: number }) => {
  const requests = config.requestsPerMinute > 0 ? new Gcra(config.requestsPerMinute) : undefined
  const sends = config.sendsPerMinute > 0 ? new Gcra(config.sendsPerMinute) : undefined

  const takeUnits = (tokenId: string, units: Units, now: number): RateLimitOutcome => {
    const overall = units.requests > 0 ? requests?.check(tokenId, now, units.requests) : undefined
    const send = units.sends > 0 ? sends?.check(tokenId, now, units.sends) : undefined
    if (overall?.allowed === false) return { allowed: false, reported: overall, refused: "requests" }
    if (send?.allowed === false) return { allowed: false, reported: send, refused: "sends" }
    if (overall !== undefined) requests!.commit(tokenId, overall.next)
    if (send !== undefined) sends!.commit(tokenId, send.next)
    return { allowed: true, reported: tighter(overall, send) }
  }

  // Every authenticated Agent API request passes here: no object built per request.
  const oneRequest: Units = { requests: 1, sends: 0 }
  const oneSend: Units = { requests: 1, sends: 1 }
  const take = (tokenId: string, isSend: boolean, now: number): RateLimitOutcome =>
    takeUnits(tokenId, isSend ? oneSend : oneRequest, now)

  const takeSend = (key: string, now: number): RateLimitOutcome => {
    const send = sends?.check(key, now)
    if (send?.allowed === true) sends!.commit(key, send.next)
    return { allowed: send?.allowed !== false, reported: send }
  }

  const peek = (tokenId: string, now: number) => ({
    requests: requests?.peek(tokenId, now),
    sends: sends?.peek(tokenId, now)
  })

  const sweep = (now: number) => {
    requests?.sweep(now)
    sends?.sweep(now)
  }

  return { take, takeUnits, takeSend, peek, sweep }
}

/** Where budgets are kept: the service less its sweep schedule, the sweep at an instant. */
type Store = Omit<RateLimiterShape, "sweep" | "sweepEvery"> & { readonly sweep: (now: number) => Effect.Effect<void> }

/** The in-memory limiter as the service: every answer is at hand, no round trip. */
const inMemory = (config: { readonly requestsPerMinute: number; readonly sendsPerMinute: number }): Store => {
  const limiter = makeRateLimiter(config)
  return {
    take: (tokenId: string, sends: boolean, now: number) => Effect.succeed(limiter.take(tokenId, sends, now)),
    takeUnits: (tokenId: string, units: Units, now: number) => Effect.succeed(limiter.takeUnits(tokenId, units, now)),
    takeSend: (key: string, now: number) => Effect.succeed(limiter.takeSend(key, now)),
    peek: (tokenId: string, now: number) => Effect.succeed(limiter.peek(tokenId, now)),
    sweep: (now: number) => Effect.sync(() => limiter.sweep(now))
  }
}

export class RateLimiter extends Context.Service<RateLimiter, RateLimiterShape>()("herald/RateLimiter") {
  /** Needs `RateLimitConfig`, `RateLimitRepo` and the `PgClient` (which tells the embedded database by its socket). */
  static readonly layerNoDeps = Layer.effect(RateLimiter, Effect.gen(function*() {
    const config = yield* RateLimitConfig
    const store = yield* RateLimitStore
    // The embedded database is served on a local socket (db/Embedded.ts): one process.
    const shared = store === "database" || (store === "auto" && (yield* PgClient.PgClient).config.path === undefined)
    const limiter: Store = shared ? makeSharedRateLimiter(config, yield* RateLimitRepo) : inMemory(config)
    return RateLimiter.of({
      take: limiter.take,
      takeUnits: limiter.takeUnits,
      takeSend: limiter.takeSend,
      peek: limiter.peek,
      sweep: Effect.flatMap(Clock.currentTimeMillis, limiter.sweep),
      sweepEvery: Duration.minutes(1)
    })
  }))

  static readonly layer = RateLimiter.layerNoDeps.pipe(Layer.provide(Layer.merge(RateLimitConfig.layer, RateLimitRepo.layer)))
}
