/**
 * Rate limits per token (and per webhook service, for its inbound URL), in memory: no database round trip per request, and
 * check-and-take is one synchronous step, so concurrent requests on a node
 * cannot both take the last unit. Keys whose budget is whole again are swept
 * every minute (a worker, `runtime/Workers.ts`), so memory follows the tokens
 * active in the last minute.
 *
 * Several nodes: each node enforces the full limit on what it serves, so a
 * token spread over N nodes behind a round-robin balancer can reach N times
 * the limit. The plan when Herald runs on more than one node: give each node
 * `limit / N` (N from the cluster's runner count) for tokens it sees, and
 * periodically reconcile actual use through a small PostgreSQL table of
 * (token, window, count) rows upserted in batches every second, lending unused
 * budget to the nodes that need it; the hot path stays in memory either way.
 */
import { Clock, Context, Duration, Effect, Layer } from "effect"
import { RateLimitConfig } from "../config/RateLimitConfig.ts"
import { Gcra } from "./Gcra.ts"
import type { Decision } from "./Gcra.ts"

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
  readonly take: (tokenId: string, sends: boolean, now: number) => RateLimitOutcome
  /**
   * Takes `units` for the token at `now`, all of them or none (an MCP batch:
   * one request per message, one send per sending call).
   */
  readonly takeUnits: (tokenId: string, units: Units, now: number) => RateLimitOutcome
  /** Takes one send only (an inbound delivery, keyed by its service); allowed whenever the send limit is off. */
  readonly takeSend: (key: string, now: number) => RateLimitOutcome
  /** The token's budgets at `now`, without taking any; undefined for a limit that is off. */
  readonly peek: (tokenId: string, now: number) => { readonly requests: Decision | undefined; readonly sends: Decision | undefined }
  /** Forgets keys whose budget is whole again; a worker runs it every `sweepEvery`. */
  readonly sweep: Effect.Effect<void>
  readonly sweepEvery: Duration.Duration
}

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

export class RateLimiter extends Context.Service<RateLimiter, RateLimiterShape>()("herald/RateLimiter") {
  static readonly layerNoDeps = Layer.effect(RateLimiter, Effect.gen(function*() {
    const limiter = makeRateLimiter(yield* RateLimitConfig)
    return RateLimiter.of({
      take: limiter.take,
      takeUnits: limiter.takeUnits,
      takeSend: limiter.takeSend,
      peek: limiter.peek,
      sweep: Effect.map(Clock.currentTimeMillis, limiter.sweep),
      sweepEvery: Duration.minutes(1)
    })
  }))

  static readonly layer = RateLimiter.layerNoDeps.pipe(Layer.provide(RateLimitConfig.layer))
}
