/**
 * The sweep of live activities: a running actor wakes itself for its paced
 * and backed-off operations, but an actor that stopped (a restart, a node
 * that died) leaves its queue due with no one to send it. Each pass gives up
 * the claims of processes that died mid-send (`unknown`, never resent) and
 * hands every activity with work left due to its actor. And once at start,
 * the expiry timers a crash left unstored (between a start's commit and its
 * timer) are stored. Both run as workers (runtime/Workers.ts).
 */
import { Duration, Effect } from "effect"
import { Outbox } from "../push/Outbox.ts"
import { makeActorCalls } from "./ActorCalls.ts"
import { LifecycleRepo } from "./LifecycleRepo.ts"
import { QueueRepo } from "./QueueRepo.ts"

/** How often the sweep runs. */
export const SWEEP_INTERVAL = Duration.seconds(2)
/**
 * A running actor wakes itself for its paced and backed-off operations; the
 * sweep takes only work left due longer than this (after the first sweep,
 * which takes everything a restart left).
 */
const SWEEP_GRACE_MILLIS = 3_000

export const makeSweeper = Effect.gen(function*() {
  const queue = yield* QueueRepo
  const lifecycle = yield* LifecycleRepo
  const calls = yield* makeActorCalls
  const staleSeconds = Duration.toSeconds((yield* Outbox).staleClaim)
  // The first pass (and the first after a failed one) takes everything left due.
  let grace = 0

  const sweep = Effect.gen(function*() {
    const released = yield* queue.releaseDeadClaims(staleSeconds)
    const due = yield* queue.withQueuedWork(grace)
    yield* Effect.forEach(new Set([...released, ...due]), calls.flush, { discard: true })
    grace = SWEEP_GRACE_MILLIS
  }).pipe(Effect.onError(() => Effect.sync(() => {
    grace = 0
  })))

  const rescheduleExpiries = Effect.flatMap(lifecycle.liveDeadlines, (rows) =>
    Effect.forEach(rows, (r) => calls.scheduleExpiry(r.id, r.expiresAt).pipe(Effect.orDie), { concurrency: 16, discard: true }))

  return { sweep, rescheduleExpiries }
})
