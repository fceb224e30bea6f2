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
 * An operation is claimed (committed `sending`, in the name of this process's
 * outbox node) before its provider call: never sent twice. A claim whose node
 * died is given up as `unknown` by the sweep, and its device's queue moves
 * on. The queue lives in PostgreSQL; a restart resumes it in order. Expiry is
 * a persisted `DeliverAt` message.
 */
import { ActivityEnded, ActivityPayloadTooLarge, PriorityReason } from "@herald/api"
import { Clock, DateTime, Duration, Effect, Fiber, Metric, PrimaryKey, Random, Schema, Semaphore } from "effect"
import { ClusterSchema, DeliverAt, Entity } from "effect/cluster"
import { Rpc } from "effect/rpc"
import { ActivityConfig } from "../config/ActivityConfig.ts"
import { Outbox } from "../push/Outbox.ts"
import { backoffDelay, PushGateway } from "../push/PushGateway.ts"
import type { PushTarget } from "../push/PushMessage.ts"
import { liveGrants, milestoneAllowed } from "./Budget.ts"
import { checkPayloadSize, endMessage, liveActivityMessage } from "./Cards.ts"
import { DevicePacing } from "./DevicePacing.ts"
import { nextSlot, pacedUntil } from "./Pacing.ts"
import { ActivitiesRepo } from "./Repo.ts"
import type { ActivityHead, QueuedOperation } from "./Repo.ts"

/** Attempts per operation before it fails for good. */
const MAX_ATTEMPTS = 8

/** Unsent routine snapshots replaced by newer ones or dropped by an end: how much pacing saved the devices (and the providers). */
const supersededTotal = Metric.counter("herald_live_activity_superseded_total", {
  description: "Unsent routine live-activity snapshots superseded by a newer snapshot or an end.",
  incremental: true
})

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
    const outbox = yield* Outbox
    const pacing = yield* DevicePacing
    const config = yield* ActivityConfig
    const scope = yield* Effect.scope
    const lock = yield* Semaphore.make(1)
    const updateInterval = Duration.toMillis(config.updateInterval)
    /** When each device last got a routine update of this activity. */
    const lastRoutine = new Map<string, number>()
    let timer: Fiber.Fiber<void> | undefined
    /** When the pending wake-up fires. */
    let timerAt = Number.POSITIVE_INFINITY

    /**
     * The activity's head as this actor last wrote it: updates skip a read.
     * Every write is guarded by the sequence it expects, so a change made
     * elsewhere (a prompt's end, another node) is noticed and re-read.
     */
    let head: ActivityHead | undefined

    /** Sends one claimed operation; answers what became of it ("queued" when it goes back with a backoff). */
    const sendOne = (op: QueuedOperation, target: PushTarget) =>
      Effect.gen(function*() {
        // What goes is the payload as claimed: a newer snapshot may have taken the row's place since it was read.
        const payload = yield* repo.claim(op, outbox.node)
        if (payload === undefined) return "queued" as const
        const outcome = yield* gateway.send(target, payload)
        switch (outcome._tag) {
          case "Accepted":
            yield* repo.recordAccepted(op)
            return "accepted" as const
          case "Rejected":
            yield* repo.recordFailed(op, outcome.reason, outcome.tokenInvalid)
            return "failed" as const
          case "Retry": {
            if (op.attempts + 1 >= MAX_ATTEMPTS) {
              yield* repo.recordFailed(op, outcome.reason, false)
              return "failed" as const
            }
            const delay = backoffDelay(op.attempts + 1, outcome.retryAfter, yield* Random.next)
            yield* repo.requeue(op, outcome.reason, Duration.toMillis(delay))
            return "queued" as const
          }
        }
      })

    /** Fails an operation for good without a provider call (nothing could carry it). */
    const failUnsent = (op: QueuedOperation, reason: string, deviceGone: boolean) =>
      Effect.flatMap(repo.claim(op, outbox.node), (claimed) =>
        claimed !== undefined ? Effect.as(repo.recordFailed(op, reason, deviceGone), "failed" as const) : Effect.succeed("queued" as const))

    type Sent = Map<string, "accepted" | "failed" | "queued">

    /**
     * One round: each device's next operation, if it may go now. Answers
     * whether a device has more behind what went (look again at once) and
     * when a paced or backed-off operation falls due.
     */
    const round = (sent: Sent) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        let wakeAt = Number.POSITIVE_INFINITY
        let more = false
        const sends: Array<Effect.Effect<void>> = []
        const pacedStarts: Array<{ readonly id: string; readonly at: number }> = []
        const go = (op: QueuedOperation, send: Effect.Effect<"accepted" | "failed" | "queued">) => {
          more ||= op.behind > 1
          sends.push(Effect.map(send, (result) => {
            sent.set(op.id, result)
            // Back in the queue with a backoff: the next round reads when it falls due.
            if (result === "queued") more = true
          }))
        }
        for (const op of yield* repo.nextOperations(id)) {
          if (op.status === "sending") continue
          if (!op.due) {
            wakeAt = Math.min(wakeAt, now + op.dueInMillis)
            continue
          }
          // An inactive device (its token refused for good, or the phone changed hands) can show
          // nothing more: it fails here, in this activity's own lock order (its row first).
          if (!op.deviceActive) {
            go(op, failUnsent(op, "DeviceInactive", true))
            continue
          }
          const target = targetOf(op)
          if (target === "AwaitingUpdateToken") continue
          if (target === "NoPushToStartToken") {
            go(op, failUnsent(op, target, false))
            continue
          }
          if (op.op === "start") {
            const slot = pacing.takeStartSlot(op.deviceId, now)
            if (slot > now) {
              wakeAt = Math.min(wakeAt, slot)
              pacedStarts.push({ id: op.id, at: slot })
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
          go(op, sendOne(op, target))
        }
        // Stored so `readiness.nextStartAt` tells when the start goes, not when it was queued.
        if (pacedStarts.length > 0) yield* repo.deferStarts(pacedStarts)
        yield* Effect.all(sends, { concurrency: "unbounded", discard: true })
        return { more, wakeAt }
      })

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
        const r = yield* round(sent)
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
      Effect.map(repo.outcomeOf(id, sequence), (o) => ({ sequence, apnsPriority, priorityReason, superseded, ...o }))

    /**
     * A routine update whose devices are all paced needs no look at the
     * queue: only a wake-up no later than the first may send (its flush sends
     * whatever is due then). Answers whether it was paced.
     */
    const wakeForPaced = (deviceIds: ReadonlyArray<string>, now: number) =>
      Effect.gen(function*() {
        const until = pacedUntil(deviceIds.map((d) => nextSlot(lastRoutine.get(d), updateInterval, now)), now)
        if (until === undefined) return false
        if (Number.isFinite(until) && timerAt > until) yield* schedule(until, now)
        return true
      })

    const update = (patch: Readonly<Record<string, unknown>>, priority: "high" | "default") =>
      Effect.gen(function*() {
        for (let attempt = 0; attempt < 5; attempt++) {
          const current = head ?? (yield* repo.head(id))
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
          const queued = yield* repo.enqueueUpdate({
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
      const result = yield* repo.end(id, (activityId, props) => endMessage(activityId, props, now))
      if (result === undefined) return yield* ended
      if (result.superseded > 0) yield* Metric.update(supersededTotal, result.superseded)
      yield* flushLocked
      return yield* outcome(result.sequence, 10, "end", result.superseded)
    })

    return LiveActivityEntity.of({
      Flush: () => flush,
      // A mutation runs to its end once begun, even if its caller goes away.
      Update: ({ payload }) => Effect.uninterruptible(lock.withPermit(update(payload.props, payload.priority))),
      End: () => Effect.uninterruptible(lock.withPermit(end)),
      Expire: () => lock.withPermit(Effect.suspend(() => {
        head = undefined
        return repo.expire(id)
      })).pipe(Effect.asVoid)
    })
  }),
  { concurrency: 1, maxIdleTime: Duration.minutes(5) }
)
