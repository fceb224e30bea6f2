/**
 * The behaviour of the live-activity actor (protocol: ActivityProtocol.ts), one
 * per activity. Mutations are serialized through it, and it sends each
 * target device's queue in sequence order (DeviceQueue.ts):
 *
 * - priority: routine updates go at APNs priority 5; `priority: high` is a
 *   milestone at 10 while the budget allows (Budget.ts), else 5 with
 *   `budget_exhausted`;
 * - barriers: a start, milestone or end is never dropped or overtaken;
 * - superseding: an unsent routine snapshot is replaced by a newer one;
 * - pacing: starts at most one per device per start interval (across the
 *   node's activities), routine updates one per device per update interval;
 * - iOS updates and ends wait for the device's update token;
 * - transient provider failures go back to the queue with backoff.
 *
 * An operation is claimed (committed `sending`, in the name of this process's
 * outbox node) before its provider call: never sent twice. A claim whose node
 * died is given up as `unknown` by the sweep, and its device's queue moves
 * on. The queue lives in PostgreSQL; a restart resumes it in order. Expiry is
 * the shared persisted deadline message (cluster/Deadline.ts).
 *
 * Delivered twice, a message changes nothing the first did not: a flush claims
 * each operation before it goes; an end or expiry is a conditional update from
 * a live status (the feed entry concludes once); an update carrying an
 * `updateId` it has already applied answers that outcome again. Requests on
 * the node the actor lives on call its update directly (ResidentActivities.ts),
 * under the same lock as its messages. The actor's
 * own wake-up fiber (pacing, backoffs) is its clock, not a background worker:
 * it lives and dies with the actor.
 */
import { ActivityEnded } from "@herald/api"
import type { PriorityReason } from "@herald/api"
import { Clock, Duration, Effect, Fiber, Metric, Semaphore } from "effect"
import { Entity } from "effect/cluster"
import { ActivityFeed } from "../inbox/ActivityFeed.ts"
import { liveGrants, milestoneAllowed } from "./Budget.ts"
import { checkPayloadSize, endMessage, liveActivityMessage } from "./Cards.ts"
import { makeDeviceQueue } from "./DeviceQueue.ts"
import type { Sent } from "./DeviceQueue.ts"
import { LiveActivityEntity } from "./ActivityProtocol.ts"
import type { MutationOutcome } from "./ActivityProtocol.ts"
import { concludeEntry } from "./FeedEntries.ts"
import { LifecycleRepo } from "./LifecycleRepo.ts"
import { supersededTotal } from "./Metrics.ts"
import { pacedUntil } from "./Pacing.ts"
import { QueueRepo } from "./QueueRepo.ts"
import { ReadModelRepo } from "./ReadModelRepo.ts"
import { ResidentActivities } from "./ResidentActivities.ts"
import type { ActivityHead } from "./Rows.ts"

const ended = new ActivityEnded({ error: "The live activity has ended." })

/** How many applied `updateId`s an actor remembers (a redelivery follows its first delivery closely). */
const REMEMBERED_UPDATES = 64

/** `props` merged field by field; `null` removes a field. */
const merge = (props: Readonly<Record<string, unknown>>, patch: Readonly<Record<string, unknown>>) => {
  const next: Record<string, unknown> = { ...props }
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete next[key]
    else next[key] = value
  }
  return next
}

export const LiveActivityLive = LiveActivityEntity.toLayer(
  Effect.gen(function*() {
    const address = yield* Entity.CurrentAddress
    const id = address.entityId
    const lifecycle = yield* LifecycleRepo
    const queueRepo = yield* QueueRepo
    const readModel = yield* ReadModelRepo
    const feed = yield* ActivityFeed
    const queue = yield* makeDeviceQueue(id)
    const scope = yield* Effect.scope
    const lock = yield* Semaphore.make(1)
    let timer: Fiber.Fiber<void> | undefined
    /** When the pending wake-up fires. */
    let timerAt = Number.POSITIVE_INFINITY

    /**
     * The activity's head as this actor last wrote it: updates skip a read.
     * Every write is guarded by the sequence it expects, so a change made
     * elsewhere (a prompt's end, another node) is noticed and re-read.
     */
    let head: ActivityHead | undefined

    const schedule = (wakeAt: number, now: number) =>
      Effect.gen(function*() {
        if (timer !== undefined) yield* Fiber.interrupt(timer)
        timer = undefined
        timerAt = Number.POSITIVE_INFINITY
        if (!Number.isFinite(wakeAt)) return
        timerAt = wakeAt
        timer = yield* Effect.forkIn(
          Effect.sleep(Duration.millis(Math.max(0, wakeAt - now))).pipe(
            // Fired: no longer pending (its flush must not interrupt itself when it schedules the next one).
            Effect.andThen(Effect.suspend(() => {
              timer = undefined
              timerAt = Number.POSITIVE_INFINITY
              return flush
            }))
          ),
          scope
        )
      })

    /**
     * Sends what may go now; answers what became of each operation sent.
     * Not interruptible: a caller that goes away (a dropped request) must not
     * leave a claimed operation unsent or a device paced with no wake-up set.
     */
    const flushLocked = Effect.uninterruptible(Effect.gen(function*() {
      const sent: Sent = new Map()
      let wakeAt = Number.POSITIVE_INFINITY
      for (let i = 0; i < 100; i++) {
        const r = yield* queue.round(sent)
        wakeAt = r.wakeAt
        if (!r.more) break
      }
      yield* schedule(wakeAt, yield* Clock.currentTimeMillis)
      return sent
    }))
    const flush: Effect.Effect<void> = lock.withPermit(flushLocked).pipe(
      Effect.asVoid,
      Effect.catchCause((cause) => Effect.logWarning("live activity flush failed", cause))
    )

    const outcome = (sequence: number, apnsPriority: 5 | 10, priorityReason: PriorityReason, superseded: number) =>
      Effect.map(readModel.outcomeOf(id, sequence), (o) => ({ sequence, apnsPriority, priorityReason, superseded, ...o }))

    /**
     * A routine update whose devices are all paced needs no look at the
     * queue: only a wake-up no later than the first may send (its flush sends
     * whatever is due then). Answers whether it was paced.
     */
    const wakeForPaced = (deviceIds: ReadonlyArray<string>, now: number) =>
      Effect.gen(function*() {
        const until = pacedUntil(deviceIds.map((d) => queue.routineSlot(d, now)), now)
        if (until === undefined) return false
        if (Number.isFinite(until) && timerAt > until) yield* schedule(until, now)
        return true
      })

    const update = (patch: Readonly<Record<string, unknown>>, priority: "high" | "default") =>
      Effect.gen(function*() {
        for (let attempt = 0; attempt < 5; attempt++) {
          const current = head ?? (yield* lifecycle.head(id))
          head = undefined
          if (current === undefined || ["ended", "expired", "failed"].includes(current.status)) return yield* ended
          const props = merge(current.props, patch)
          const now = yield* Clock.currentTimeMillis
          const grants = liveGrants(current.milestoneGrants, now)
          const milestone = priority === "high" && milestoneAllowed(grants, now)
          const apnsPriority = milestone ? 10 : 5
          const reason: PriorityReason = milestone ? "milestone" : priority === "high" ? "budget_exhausted" : "routine"
          const payload = liveActivityMessage({
            activityId: id,
            event: "update",
            state: props,
            priority: apnsPriority,
            timestampSeconds: Math.floor(now / 1000),
            staleDate: Math.floor(Date.parse(current.expiresAt) / 1000)
          })
          // The end will carry these props: it must fit too.
          yield* checkPayloadSize(payload, "update", endMessage(id, props, Math.floor(now / 1000)))
          const milestoneGrants = milestone ? [...grants, now] : grants
          const queued = yield* queueRepo.enqueueUpdate({
            activityId: id,
            expectedSequence: current.sequence,
            priority: apnsPriority,
            reason,
            grants: milestoneGrants,
            payload
          })
          // Changed elsewhere since it was read: read it again.
          if (queued === undefined) continue
          if (queued.superseded > 0) yield* Metric.update(supersededTotal, queued.superseded)
          head = { ...current, props, sequence: queued.sequence, milestoneGrants }
          const results: Sent = apnsPriority === 5 && (yield* wakeForPaced(queued.deviceIds, now)) ? new Map() : yield* flushLocked
          let accepted = 0
          let failed = 0
          for (const opId of queued.operationIds) {
            const result = results.get(opId)
            if (result === "accepted") accepted++
            if (result === "failed") failed++
          }
          return {
            sequence: queued.sequence,
            apnsPriority,
            priorityReason: reason,
            superseded: queued.superseded,
            accepted,
            failed,
            queued: queued.deviceIds.length - accepted - failed
          } satisfies MutationOutcome
        }
        return yield* Effect.die(new Error(`live activity ${id} kept changing under its actor`))
      })

    const end = Effect.gen(function*() {
      head = undefined
      const now = Math.floor((yield* Clock.currentTimeMillis) / 1000)
      // The end and its activity-feed entry commit together.
      const result = yield* lifecycle.transaction(
        Effect.tap(lifecycle.end(id, (activityId, props) => endMessage(activityId, props, now)), (r) =>
          r === undefined ? Effect.void : concludeEntry(feed, r.closed, "ended"))
      )
      if (result === undefined) return yield* ended
      if (result.superseded > 0) yield* Metric.update(supersededTotal, result.superseded)
      yield* flushLocked
      return yield* outcome(result.sequence, 10, "end", result.superseded)
    })

    const expire = lifecycle.transaction(
      Effect.tap(lifecycle.expire(id), (closed) => closed === undefined ? Effect.void : concludeEntry(feed, closed, "expired"))
    )

    // A mutation runs to its end once begun, even if its caller goes away.
    const updateLocked = (props: Readonly<Record<string, unknown>>, priority: "high" | "default") =>
      Effect.uninterruptible(lock.withPermit(update(props, priority)))

    /** The outcomes of the last updates applied, by `updateId`, oldest first. */
    const applied = new Map<string, MutationOutcome>()
    /** An update delivered again (the same `updateId`) answers its first outcome and applies nothing. */
    const updateOnce = (props: Readonly<Record<string, unknown>>, priority: "high" | "default", updateId: string | undefined) =>
      updateId === undefined ? updateLocked(props, priority) : Effect.uninterruptible(lock.withPermit(Effect.suspend(() => {
        const first = applied.get(updateId)
        if (first !== undefined) return Effect.succeed(first)
        return Effect.tap(update(props, priority), (outcome) =>
          Effect.sync(() => {
            applied.set(updateId, outcome)
            if (applied.size > REMEMBERED_UPDATES) applied.delete(applied.keys().next().value!)
          }))
      })))

    let messagedAt = yield* Clock.currentTimeMillis
    const messaged = <A, E, R>(self: Effect.Effect<A, E, R>) =>
      Effect.andThen(Effect.map(Clock.currentTimeMillis, (now) => void (messagedAt = now)), self)
    // Last, so that it is the first thing undone when the actor stops.
    yield* (yield* ResidentActivities).register(id, { messagedAt: () => messagedAt, update: updateLocked })

    return LiveActivityEntity.of({
      Flush: () => messaged(flush),
      Update: ({ payload }) => messaged(updateOnce(payload.props, payload.priority, payload.updateId)),
      End: () => messaged(Effect.uninterruptible(lock.withPermit(end))),
      Expire: () => messaged(lock.withPermit(Effect.suspend(() => {
        head = undefined
        return expire
      })).pipe(Effect.asVoid))
    })
  }),
  { concurrency: 1, maxIdleTime: Duration.minutes(5) }
)
