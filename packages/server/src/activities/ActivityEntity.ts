/**
 * One actor per live activity: an `effect/cluster` entity keyed by the
 * activity id. Mutations are serialized through it, and it sends each target
 * device's queue in sequence order:
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
 * An operation is claimed (committed `sending`) before its provider call:
 * never sent twice. The queue lives in PostgreSQL; a restart resumes it in
 * order. Expiry is a persisted `DeliverAt` message.
 */
import { ActivityEnded, ActivityPayloadTooLarge, PriorityReason } from "@herald/api"
import { Clock, DateTime, Duration, Effect, Fiber, PrimaryKey, Random, Schema, Semaphore } from "effect"
import { ClusterSchema, DeliverAt, Entity } from "effect/cluster"
import { Rpc } from "effect/rpc"
import { ActivityConfig } from "../config/ActivityConfig.ts"
import { backoffDelay, PushGateway } from "../push/PushGateway.ts"
import type { PushTarget } from "../push/PushMessage.ts"
import { liveGrants, milestoneAllowed } from "./Budget.ts"
import { checkPayloadSize, liveActivityMessage } from "./Cards.ts"
import { DevicePacing } from "./DevicePacing.ts"
import { nextSlot } from "./Pacing.ts"
import { ActivitiesRepo } from "./Repo.ts"
import type { QueuedOperation } from "./Repo.ts"

/** Attempts per operation before it fails for good. */
const MAX_ATTEMPTS = 8

export class ActivityExpireAt extends Schema.Class<ActivityExpireAt>("herald/ActivityExpireAt")({
  expiresAtMillis: Schema.Number
}) {
  [PrimaryKey.symbol]() {
    return "expire"
  }
  [DeliverAt.symbol]() {
    return DateTime.makeUnsafe(this.expiresAtMillis)
  }
}

/** What a mutation came to, for its answer. */
export const MutationOutcome = Schema.Struct({
  sequence: Schema.Number,
  apnsPriority: Schema.Literals([5, 10]),
  priorityReason: PriorityReason,
  superseded: Schema.Number,
  accepted: Schema.Number,
  failed: Schema.Number,
  queued: Schema.Number
})
export type MutationOutcome = typeof MutationOutcome.Type

const ended = new ActivityEnded({ error: "The live activity has ended." })

export const LiveActivityEntity = Entity.make("LiveActivity", [
  /** Sends whatever is due now, device by device in order; safe to call any number of times. */
  Rpc.make("Flush"),
  Rpc.make("Update", {
    payload: { props: Schema.Record(Schema.String, Schema.Unknown), priority: Schema.Literals(["high", "default"]) },
    success: MutationOutcome,
    error: Schema.Union([ActivityEnded, ActivityPayloadTooLarge])
  }),
  Rpc.make("End", { success: MutationOutcome, error: ActivityEnded }),
  Rpc.make("Expire", { payload: ActivityExpireAt }).annotate(ClusterSchema.Persisted, true)
])

/** Where an operation goes, or why it cannot go. */
const targetOf = (op: QueuedOperation): PushTarget | "NoPushToStartToken" | "AwaitingUpdateToken" => {
  const environment = op.environment !== null ? { environment: op.environment } : {}
  if (op.platform === "android") return { deviceId: op.deviceId, platform: "android", token: op.pushToken }
  if (op.op === "start") {
    return op.pushToStartToken === null
      ? "NoPushToStartToken"
      : { deviceId: op.deviceId, platform: "ios", token: op.pushToStartToken, ...environment }
  }
  return op.updateToken === null ? "AwaitingUpdateToken" : { deviceId: op.deviceId, platform: "ios", token: op.updateToken, ...environment }
}

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
    const repo = yield* ActivitiesRepo
    const gateway = yield* PushGateway
    const pacing = yield* DevicePacing
    const config = yield* ActivityConfig
    const scope = yield* Effect.scope
    const lock = yield* Semaphore.make(1)
    const updateInterval = Duration.toMillis(config.updateInterval)
    /** When each device last got a routine update of this activity. */
    const lastRoutine = new Map<string, number>()
    let timer: Fiber.Fiber<void> | undefined

    const sendOne = (op: QueuedOperation, target: PushTarget) =>
      Effect.gen(function*() {
        if (!(yield* repo.claim(op.id))) return
        const outcome = yield* gateway.send(target, op.payload)
        switch (outcome._tag) {
          case "Accepted":
            return yield* repo.recordAccepted(op)
          case "Rejected":
            return yield* repo.recordFailed(op, outcome.reason)
          case "Retry": {
            if (op.attempts + 1 >= MAX_ATTEMPTS) return yield* repo.recordFailed(op, outcome.reason)
            const delay = backoffDelay(op.attempts + 1, outcome.retryAfter, yield* Random.next)
            return yield* repo.requeue(op, outcome.reason, Duration.toMillis(delay))
          }
        }
      })

    /** One round: each device's next operation, if it may go now. Answers how many went and when to look again. */
    const round = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      let wakeAt = Number.POSITIVE_INFINITY
      const sends: Array<Effect.Effect<void>> = []
      for (const op of yield* repo.nextOperations(id)) {
        if (op.status === "sending" || !op.due) continue
        const target = targetOf(op)
        if (target === "AwaitingUpdateToken") continue
        if (target === "NoPushToStartToken") {
          sends.push(Effect.flatMap(repo.claim(op.id), (claimed) => claimed ? repo.recordFailed(op, target) : Effect.void))
          continue
        }
        if (op.op === "start") {
          const slot = pacing.takeStartSlot(op.deviceId, now)
          if (slot > now) {
            wakeAt = Math.min(wakeAt, slot)
            continue
          }
        } else if (op.op === "update" && op.priority === 5) {
          const next = nextSlot(lastRoutine.get(op.deviceId), updateInterval, now)
          if (next > now) {
            wakeAt = Math.min(wakeAt, next)
            continue
          }
          lastRoutine.set(op.deviceId, now)
        }
        sends.push(sendOne(op, target))
      }
      yield* Effect.all(sends, { concurrency: "unbounded", discard: true })
      return { sent: sends.length, wakeAt }
    })

    const schedule = (wakeAt: number, now: number) =>
      Effect.gen(function*() {
        if (timer !== undefined) yield* Fiber.interrupt(timer)
        timer = undefined
        if (!Number.isFinite(wakeAt)) return
        timer = yield* Effect.forkIn(
          Effect.sleep(Duration.millis(Math.max(0, wakeAt - now))).pipe(Effect.andThen(Effect.suspend(() => flush))),
          scope
        )
      })

    const flushLocked = Effect.gen(function*() {
      let wakeAt = Number.POSITIVE_INFINITY
      for (let i = 0; i < 100; i++) {
        const r = yield* round
        wakeAt = r.wakeAt
        if (r.sent === 0) break
      }
      yield* schedule(wakeAt, yield* Clock.currentTimeMillis)
    })
    const flush: Effect.Effect<void> = lock.withPermit(flushLocked).pipe(
      Effect.catchCause((cause) => Effect.logWarning("live activity flush failed", cause))
    )

    const outcome = (sequence: number, apnsPriority: 5 | 10, priorityReason: PriorityReason, superseded: number) =>
      Effect.map(repo.outcomeOf(id, sequence), (o) => ({ sequence, apnsPriority, priorityReason, superseded, ...o }))

    const update = (patch: Readonly<Record<string, unknown>>, priority: "high" | "default") =>
      Effect.gen(function*() {
        const head = yield* repo.head(id)
        if (head === undefined || ["ended", "expired", "failed"].includes(head.status)) return yield* ended
        const props = merge(head.props, patch)
        const now = yield* Clock.currentTimeMillis
        const grants = liveGrants(head.milestoneGrants, now)
        const milestone = priority === "high" && milestoneAllowed(grants, now)
        const apnsPriority = milestone ? 10 : 5
        const reason: PriorityReason = milestone ? "milestone" : priority === "high" ? "budget_exhausted" : "routine"
        const message = (activityId: string) =>
          liveActivityMessage({
            activityId,
            event: "update",
            state: props,
            priority: apnsPriority,
            timestampSeconds: Math.floor(now / 1000),
            staleDate: Math.floor(Date.parse(head.expiresAt) / 1000)
          })
        yield* checkPayloadSize(message(id), "update")
        const queued = yield* repo.enqueueUpdate(id, props, apnsPriority, reason, milestone ? [...grants, now] : grants, message)
        yield* flushLocked
        return yield* outcome(queued.sequence, apnsPriority, reason, queued.superseded)
      })

    const end = Effect.gen(function*() {
      const head = yield* repo.head(id)
      if (head === undefined) return yield* ended
      const now = yield* Clock.currentTimeMillis
      const result = yield* repo.end(id, (activityId) =>
        liveActivityMessage({
          activityId,
          event: "end",
          state: head.props,
          priority: 10,
          timestampSeconds: Math.floor(now / 1000),
          // The final state stays on the lock screen for a few minutes.
          dismissalDate: Math.floor(now / 1000) + 300
        }))
      if (result === undefined) return yield* ended
      yield* flushLocked
      return yield* outcome(result.sequence, 10, "end", result.superseded)
    })

    return LiveActivityEntity.of({
      Flush: () => flush,
      Update: ({ payload }) => lock.withPermit(update(payload.props, payload.priority)),
      End: () => lock.withPermit(end),
      Expire: () => lock.withPermit(repo.expire(id)).pipe(Effect.asVoid)
    })
  }),
  { concurrency: 1, maxIdleTime: Duration.minutes(5) }
)
