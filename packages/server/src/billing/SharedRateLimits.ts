/**
 * The per-token (and per-service) budgets kept in PostgreSQL, so that every
 * node takes from the same budget: a token spread over N nodes behind a
 * round-robin balancer gets the limit, not N times it. The GCRA arithmetic is
 * the in-memory limiter's (Gcra.ts), so both answer the same numbers.
 *
 * What a take costs (docs/limits.md, "Across nodes"):
 * - Takes made in the same scheduler turn share one statement (group commit,
 *   db/Batching.ts): one row per key, a key's takes summed, all of them or
 *   none; a key whose sum does not fit is then taken one request at a time,
 *   in order, so each request still gets exactly what it would alone.
 * - A refusal the node can already prove costs no statement: budgets only
 *   refill with time, and the times each statement answers are a lower bound
 *   of the key's times from then on (other nodes only move them later), so a
 *   take those times refuse is refused as the database would.
 * Times are the service clock's, passed in, and a take is measured from the
 * latest time any take of its key was (RateLimitRepo's `now_ms`), as one
 * clock would: statements run in no particular order, and a take measured
 * from its own earlier time lost the budget's last unit. Nodes whose clocks
 * differ by d may let a key through up to d early.
 */
import { Effect } from "effect"
import type { NonEmptyReadonlyArray } from "effect/Array"
import { batched } from "../db/Batching.ts"
import type { Decision } from "./Gcra.ts"
import { decide, MINUTE, peekAt, taken } from "./Gcra.ts"
import type { BudgetTimes, RateLimitRepo, Take, TakeResult } from "./RateLimitRepo.ts"
import type { RateLimitOutcome, Units } from "./RateLimiter.ts"

const tighter = (a: Decision | undefined, b: Decision | undefined) =>
  a === undefined ? b : b === undefined ? a : b.remaining < a.remaining ? b : a

/** Nothing to take (every limit that applies is off): one shared answer. */
const nothingTaken = Effect.succeed<RateLimitOutcome>({ allowed: true, reported: undefined })

/** A node's view of a key: times some statement answered, never later than the key's own. */
interface Known {
  requestsTat: number | undefined
  sendsTat: number | undefined
  nowMs: number | undefined
}

/** The time a take is measured at: its own, or a later one another take of the key was (RateLimitRepo's `now_ms`). */
const measuredAt = (take: Take, times: { readonly nowMs?: number | null | undefined } | undefined): Take =>
  times?.nowMs != null && times.nowMs > take.now ? { ...take, now: times.nowMs } : take

/** Bound on the keys a node remembers between sweeps (each a refusal it may answer alone). */
const KNOWN_KEYS = 100_000

export const makeSharedRateLimiter = (
  config: { readonly requestsPerMinute: number; readonly sendsPerMinute: number },
  repo: RateLimitRepo["Service"]
) => {
  const { requestsPerMinute: requestLimit, sendsPerMinute: sendLimit } = config
  const requestsInterval = requestLimit > 0 ? MINUTE / requestLimit : 0
  const sendsInterval = sendLimit > 0 ? MINUTE / sendLimit : 0

  const known = new Map<string, Known>()
  const learn = (key: string, times: BudgetTimes | undefined) => {
    if (times === undefined) return
    let entry = known.get(key)
    if (entry === undefined) {
      if (known.size >= KNOWN_KEYS) known.clear()
      entry = { requestsTat: undefined, sendsTat: undefined, nowMs: undefined }
      known.set(key, entry)
    }
    if (times.requestsTat !== null) entry.requestsTat = Math.max(entry.requestsTat ?? 0, times.requestsTat)
    if (times.sendsTat !== null) entry.sendsTat = Math.max(entry.sendsTat ?? 0, times.sendsTat)
    if (times.nowMs !== null) entry.nowMs = Math.max(entry.nowMs ?? 0, times.nowMs)
  }

  /** The refusal `times` prove for these units at `now` (requests first, as in memory), if any. */
  const refusal = (
    times: { readonly requestsTat?: number | null | undefined; readonly sendsTat?: number | null | undefined; readonly nowMs?: number | null | undefined } | undefined,
    unmeasured: Take
  ): RateLimitOutcome | undefined => {
    const take = measuredAt(unmeasured, times)
    const overall = take.requests > 0 ? decide(requestLimit, times?.requestsTat ?? undefined, take.now, take.requests) : undefined
    if (overall?.allowed === false) return { allowed: false, reported: overall, refused: "requests" }
    const send = take.sends > 0 ? decide(sendLimit, times?.sendsTat ?? undefined, take.now, take.sends) : undefined
    if (send?.allowed === false) return { allowed: false, reported: send, refused: "sends" }
    return undefined
  }

  /** The outcome of units taken at `now` that moved the key's times to `next` (the times after them). */
  const allowed = (take: Take, next: { readonly requestsTat: number; readonly sendsTat: number }): RateLimitOutcome => ({
    allowed: true,
    reported: tighter(
      take.requests > 0 ? taken(requestLimit, next.requestsTat, take.now) : undefined,
      take.sends > 0 ? taken(sendLimit, next.sendsTat, take.now) : undefined
    )
  })

  /**
   * Refused by the statement although the times it read back would let the units through: another
   * node took from the key between its snapshot and its update. The budget is spent; one unit's time
   * is the honest wait.
   */
  const raced = (take: Take, times: BudgetTimes | undefined): RateLimitOutcome => {
    const [limit, cost, stored, refused] = take.sends > 0
      ? [sendLimit, take.sends, times?.sendsTat, "sends" as const]
      : [requestLimit, take.requests, times?.requestsTat, "requests" as const]
    const reported = { allowed: false, limit, remaining: 0, resetMs: Math.max(0, (stored ?? take.now) - take.now), retryAfterMs: (MINUTE / limit) * cost }
    return { allowed: false, reported, refused }
  }

  /** One take, one statement, answered exactly. */
  const takeOne = (take: Take): Effect.Effect<RateLimitOutcome> =>
    Effect.map(repo.take(take, MINUTE), (result: TakeResult) => {
      learn(take.key, result.times)
      if (result.taken && result.times !== undefined) {
        return allowed(measuredAt(take, result.times), { requestsTat: result.times.requestsTat ?? 0, sendsTat: result.times.sendsTat ?? 0 })
      }
      return refusal(result.times, take) ?? raced(measuredAt(take, result.times), result.times)
    })

  /** A key's takes of one batch, in order, one statement each (their sum did not fit). */
  const takeInTurn = (takes: ReadonlyArray<Take>) =>
    Effect.forEach(takes, (take) => {
      const proven = refusal(known.get(take.key), take)
      return proven !== undefined ? Effect.succeed(proven) : takeOne(take)
    })

  /** A batch: every key's takes summed into one row of one statement. */
  const takeBatch = batched((takes: NonEmptyReadonlyArray<Take>) =>
    Effect.gen(function*() {
      if (takes.length === 1) return [yield* takeOne(takes[0])]
      const byKey = new Map<string, Array<number>>()
      takes.forEach((take, i) => {
        const members = byKey.get(take.key)
        if (members === undefined) byKey.set(take.key, [i])
        else members.push(i)
      })
      const groups = [...byKey.entries()].map(([key, members]): Take => ({
        key,
        now: Math.max(...members.map((i) => takes[i]!.now)),
        requests: members.reduce((sum, i) => sum + takes[i]!.requests, 0),
        requestsInterval,
        sends: members.reduce((sum, i) => sum + takes[i]!.sends, 0),
        sendsInterval
      }))
      const results = yield* repo.takeEach(groups, MINUTE)
      const outcomes = new Array<RateLimitOutcome>(takes.length)
      yield* Effect.forEach(groups, (group, g) => {
        const members = byKey.get(group.key)!
        const times = results[g]
        if (times === undefined) {
          return Effect.map(takeInTurn(members.map((i) => takes[i]!)), (each) => each.forEach((o, j) => outcomes[members[j]!] = o))
        }
        learn(group.key, times)
        // Taken together: each member's times are the group's, less what the members after it took.
        let requestsAfter = group.requests
        let sendsAfter = group.sends
        for (const i of members) {
          const take = takes[i]!
          requestsAfter -= take.requests
          sendsAfter -= take.sends
          outcomes[i] = allowed(measuredAt({ ...take, now: group.now }, times), {
            requestsTat: (times.requestsTat ?? 0) - requestsInterval * requestsAfter,
            sendsTat: (times.sendsTat ?? 0) - sendsInterval * sendsAfter
          })
        }
        return Effect.void
      }, { discard: true })
      return outcomes
    })
  )

  const takeUnits = (key: string, units: Units, now: number): Effect.Effect<RateLimitOutcome> => {
    // A limit that is off takes nothing and is not checked, as in memory.
    const requests = requestLimit > 0 ? units.requests : 0
    const sends = sendLimit > 0 ? units.sends : 0
    if (requests <= 0 && sends <= 0) return nothingTaken
    const take: Take = { key, now, requests, requestsInterval, sends, sendsInterval }
    const proven = refusal(known.get(key), take)
    return proven !== undefined ? Effect.succeed(proven) : takeBatch(take)
  }

  const oneRequest: Units = { requests: 1, sends: 0 }
  const oneSend: Units = { requests: 1, sends: 1 }
  const onlySend: Units = { requests: 0, sends: 1 }

  const take = (tokenId: string, isSend: boolean, now: number) => takeUnits(tokenId, isSend ? oneSend : oneRequest, now)

  // An inbound delivery: the send budget only, keyed by its service; allowed whenever that limit is off.
  const takeSend = (key: string, now: number) =>
    Effect.map(takeUnits(key, onlySend, now), ({ allowed, reported }): RateLimitOutcome => ({ allowed, reported }))

  const noLimits = Effect.succeed({ requests: undefined, sends: undefined })
  const peek = (tokenId: string, now: number) =>
    requestLimit <= 0 && sendLimit <= 0
      ? noLimits
      : Effect.map(repo.times(tokenId), (times) => {
        const at = Math.max(now, times?.nowMs ?? now)
        return {
          requests: requestLimit > 0 ? peekAt(requestLimit, times?.requestsTat ?? undefined, at) : undefined,
          sends: sendLimit > 0 ? peekAt(sendLimit, times?.sendsTat ?? undefined, at) : undefined
        }
      })

  // The rows whose budgets are whole go, and so does what this node knew of them.
  const sweep = (now: number) =>
    Effect.andThen(repo.sweep(now), Effect.sync(() => {
      for (const [key, times] of known) {
        if ((times.requestsTat ?? 0) <= now && (times.sendsTat ?? 0) <= now) known.delete(key)
      }
    }))

  return { take, takeUnits, takeSend, peek, sweep }
}
