/**
 * One actor per live activity: an `effect/cluster` entity keyed by the
 * activity id that sends each target device's queued operations in sequence
 * order. An operation is claimed (committed `sending`) before the provider
 * call, so a second node or a second flush never sends it again; a transient
 * provider failure puts it back in the queue with backoff, and the sweep of
 * `LiveActivities` flushes the activity again when it is due.
 *
 * iOS updates and ends wait for the activity's update token on that device
 * (registered by the phone); starts go to the push-to-start token.
 */
import { Duration, Effect, Random } from "effect"
import { Entity } from "effect/cluster"
import { Rpc } from "effect/rpc"
import { backoffDelay, PushGateway } from "../push/PushGateway.ts"
import type { PushTarget } from "../push/PushMessage.ts"
import { ActivitiesRepo } from "./Repo.ts"
import type { QueuedOperation } from "./Repo.ts"

/** Attempts per operation before it fails for good. */
const MAX_ATTEMPTS = 8

export const LiveActivityEntity = Entity.make("LiveActivity", [
  /** Sends whatever is due now, device by device in order; safe to call any number of times. */
  Rpc.make("Flush")
])

/** Where an operation goes, or why it cannot go yet. */
const targetOf = (op: QueuedOperation): PushTarget | string => {
  const environment = op.environment !== null ? { environment: op.environment } : {}
  if (op.platform === "android") return { deviceId: op.deviceId, platform: "android", token: op.pushToken }
  if (op.op === "start") {
    return op.pushToStartToken === null
      ? "NoPushToStartToken"
      : { deviceId: op.deviceId, platform: "ios", token: op.pushToStartToken, ...environment }
  }
  // Not claimed without one (see ActivitiesRepo.claimNext); kept for the types.
  return op.updateToken === null ? "NoUpdateToken" : { deviceId: op.deviceId, platform: "ios", token: op.updateToken, ...environment }
}

export const LiveActivityLive = LiveActivityEntity.toLayer(
  Effect.gen(function*() {
    const address = yield* Entity.CurrentAddress
    const id = address.entityId
    const repo = yield* ActivitiesRepo
    const gateway = yield* PushGateway

    const sendOne = (op: QueuedOperation) =>
      Effect.gen(function*() {
        const target = targetOf(op)
        if (typeof target === "string") return yield* repo.recordFailed(op, target)
        const outcome = yield* gateway.send(target, op.payload)
        switch (outcome._tag) {
          case "Accepted":
            return yield* repo.recordAccepted(op)
          case "Rejected":
            return yield* repo.recordFailed(op, outcome.reason)
          case "Retry": {
            if (op.attempts >= MAX_ATTEMPTS) return yield* repo.recordFailed(op, outcome.reason)
            const delay = backoffDelay(op.attempts, outcome.retryAfter, yield* Random.next)
            return yield* repo.requeue(op, outcome.reason, Duration.toMillis(delay))
          }
        }
      })

    // Device queues advance together: each round sends every device's next operation.
    const flush = Effect.gen(function*() {
      for (let round = 0; round < 100; round++) {
        const ops = yield* repo.claimNext(id)
        if (ops.length === 0) return
        yield* Effect.forEach(ops, sendOne, { concurrency: "unbounded", discard: true })
      }
    })

    return LiveActivityEntity.of({ Flush: () => flush })
  }),
  { concurrency: 1 }
)
