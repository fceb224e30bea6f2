/**
 * One activity's device queues, planned and sent: each round takes every
 * target device's next operation and decides whether it may go now (pacing:
 * starts per device across every node's activities, its slot in the database
 * (DevicePacing.ts); routine updates per device per activity, in this actor;
 * iOS updates and ends wait for the update token; an inactive device or an
 * iOS one without a push-to-start token fails it unsent), then
 * claims and sends those that may, concurrently. A transient provider failure
 * puts the operation back with a backoff; a permanent one fails it for good.
 * The actor (ActivityBehaviour.ts) runs rounds under its lock and sets its
 * wake-up from what a round answers.
 */
import { Clock, Duration, Effect, Random } from "effect"
import { ActivityConfig } from "../config/ActivityConfig.ts"
import { Outbox } from "../push/Outbox.ts"
import { backoffDelay, PushGateway } from "../push/PushGateway.ts"
import type { PushTarget } from "../push/PushMessage.ts"
import { DevicePacing } from "./DevicePacing.ts"
import { nextSlot } from "./Pacing.ts"
import { QueueRepo } from "./QueueRepo.ts"
import type { QueuedOperation } from "./Rows.ts"

/** Attempts per operation before it fails for good. */
const MAX_ATTEMPTS = 8

/** What became of each operation sent, by operation id ("queued": back in the queue with a backoff). */
export type Sent = Map<string, "accepted" | "failed" | "queued">

/** Where an operation goes, or why it cannot go. */
const targetOf = (op: QueuedOperation): PushTarget | "NoPushToStartToken" | "AwaitingUpdateToken" => {
  const environment = op.environment !== null ? { environment: op.environment } : {}
  if (op.platform === "android") return { deviceId: op.deviceId, platform: "android", token: op.pushToken }
  // A browser shows every operation as a notification under the activity's tag, at its subscription.
  if (op.platform === "web") {
    return {
      deviceId: op.deviceId,
      platform: "web",
      token: op.pushToken,
      ...(op.webPushP256dh !== null && op.webPushAuth !== null ? { webPush: { p256dh: op.webPushP256dh, auth: op.webPushAuth } } : {})
    }
  }
  if (op.op === "start") {
    return op.pushToStartToken === null
      ? "NoPushToStartToken"
      : { deviceId: op.deviceId, platform: "ios", token: op.pushToStartToken, ...environment }
  }
  return op.updateToken === null ? "AwaitingUpdateToken" : { deviceId: op.deviceId, platform: "ios", token: op.updateToken, ...environment }
}

/** The device queues of activity `activityId`, with the pacing state of its routine updates. */
export const makeDeviceQueue = (activityId: string) =>
  Effect.gen(function*() {
    const queue = yield* QueueRepo
    const gateway = yield* PushGateway
    const outbox = yield* Outbox
    const pacing = yield* DevicePacing
    const updateInterval = Duration.toMillis((yield* ActivityConfig).updateInterval)
    /** When each device last got a routine update of this activity. */
    const lastRoutine = new Map<string, number>()
    /** When the device's next routine update of this activity may go (`now`: at once). */
    const routineSlot = (deviceId: string, now: number) => nextSlot(lastRoutine.get(deviceId), updateInterval, now)

    /** Sends one claimed operation; answers what became of it ("queued" when it goes back with a backoff). */
    const sendOne = (op: QueuedOperation, target: PushTarget) =>
      Effect.gen(function*() {
        // What goes is the payload as claimed: a newer snapshot may have taken the row's place since it was read.
        const payload = yield* queue.claim(op, outbox.node)
        if (payload === undefined) return "queued" as const
        const outcome = yield* gateway.send(target, payload)
        switch (outcome._tag) {
          case "Accepted":
            yield* queue.recordAccepted(op)
            return "accepted" as const
          case "Rejected":
            yield* queue.recordFailed(op, outcome.reason, outcome.tokenInvalid)
            return "failed" as const
          case "Retry": {
            if (op.attempts + 1 >= MAX_ATTEMPTS) {
              yield* queue.recordFailed(op, outcome.reason, false)
              return "failed" as const
            }
            const delay = backoffDelay(op.attempts + 1, outcome.retryAfter, yield* Random.next)
            yield* queue.requeue(op, outcome.reason, Duration.toMillis(delay))
            return "queued" as const
          }
        }
      })

    /** Fails an operation for good without a provider call (nothing could carry it). */
    const failUnsent = (op: QueuedOperation, reason: string, deviceGone: boolean) =>
      Effect.flatMap(queue.claim(op, outbox.node), (claimed) =>
        claimed !== undefined ? Effect.as(queue.recordFailed(op, reason, deviceGone), "failed" as const) : Effect.succeed("queued" as const))

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
        for (const op of yield* queue.nextOperations(activityId)) {
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
            const slot = yield* pacing.takeStartSlot(op.deviceId, now)
            if (slot > now) {
              wakeAt = Math.min(wakeAt, slot)
              pacedStarts.push({ id: op.id, at: slot })
              continue
            }
          } else if (op.op === "update" && op.priority === 5) {
            const next = routineSlot(op.deviceId, now)
            if (next > now) {
              wakeAt = Math.min(wakeAt, next)
              continue
            }
            lastRoutine.set(op.deviceId, now)
          }
          go(op, sendOne(op, target))
        }
        // Stored so `readiness.nextStartAt` tells when the start goes, not when it was queued.
        if (pacedStarts.length > 0) yield* queue.deferStarts(pacedStarts)
        yield* Effect.all(sends, { concurrency: "unbounded", discard: true })
        return { more, wakeAt }
      })

    return { round, routineSlot }
  })
