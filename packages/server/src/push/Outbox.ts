/**
 * The durable push outbox. Every device push is a committed `push_receipts`
 * row before any answer says "queued"; sending is claim → send → record:
 *
 * - `pending`: committed, due at `next_attempt_at`. A crash loses nothing.
 * - `sending`: claimed (committed) before the provider call, so the push may
 *   have reached the provider. Each node heartbeats in `outbox_nodes`; a claim
 *   whose node has been silent for `staleClaim` belonged to a process that
 *   died: it becomes `unknown` and is never sent again, so no receipt reaches
 *   a provider twice. A live node's claims are never taken from it.
 * - `accepted` / `error`: the provider's answer; transient failures go back to
 *   `pending` with backoff (+ jitter, honouring `Retry-After`) until
 *   `maxAttempts`.
 *
 * Requests send their own pushes at once (`sendNow`) and answer with what was
 * accepted; a worker per node (`drain`, run by `runtime/Workers.ts`) sends
 * whatever is due (retries, a request that stopped waiting, rows left by a
 * restart), claiming with `FOR UPDATE SKIP LOCKED` so several nodes share the
 * table; another beats the node's heartbeat. Nothing holds a connection while
 * a provider answers (the embedded database has one). SQL: `OutboxRepo.ts`.
 */
import type { AlertPriority } from "@herald/api"
import { Clock, Context, Duration, Effect, Fiber, Layer, Queue, Random, Ref, Semaphore } from "effect"
import type { NonEmptyReadonlyArray } from "effect/Array"
import { batched } from "../db/Batching.ts"
import { OutboxConfig } from "../config/OutboxConfig.ts"
import { makeId } from "../lib/Ids.ts"
import { HELD_PREFIX, QuietGate } from "../quiet/QuietGate.ts"
import { OutboxRepo } from "./OutboxRepo.ts"
import type { Claim, Claimed, ReceiptRow, Result, Undecodable } from "./OutboxRepo.ts"
import { backoffDelay, PushGateway } from "./PushGateway.ts"
import type { PushMessage, PushOutcome } from "./PushMessage.ts"

export interface NewPush {
  readonly userId: string
  readonly deviceId: string
  readonly origin: "event" | "notification" | "interaction" | "page" | "mini-app"
  readonly itemId: string
  readonly purpose: "alert" | "withdraw"
  readonly message: PushMessage
  /**
   * How much this alert may interrupt (absent = `normal`): `critical` breaks
   * through the person's quiet hours; the others are delivered silently or
   * held per their choice (quiet/*). Withdraws ignore it.
   */
  readonly priority?: AlertPriority
}

/** A device to push to: an active device as targeting answers it (`id`), or one a receipt names (`deviceId`). */
export type PushDevice = { readonly userId: string } & ({ readonly id: string } | { readonly deviceId: string })

/** One item's push to each of these devices: the same message, origin and purpose for every one. */
export interface Delivery extends Omit<NewPush, "userId" | "deviceId" | "priority"> {
  readonly devices: ReadonlyArray<PushDevice>
  readonly priority?: AlertPriority | undefined
}

/** The rows of deliveries, one push per device, in order. */
const pushesOf = (deliveries: ReadonlyArray<Delivery>): ReadonlyArray<NewPush> =>
  deliveries.flatMap(({ devices, priority, ...push }) =>
    devices.map((device): NewPush => ({
      ...push,
      userId: device.userId,
      deviceId: "id" in device ? device.id : device.deviceId,
      ...(priority !== undefined ? { priority } : {})
    }))
  )

export interface SendSummary {
  /** Receipts whose provider accepted before the answer. */
  readonly accepted: number
  /** Receipts refused for good or out of attempts. */
  readonly failed: number
  /** Receipts still queued (transient failure, or not answered within the wait). */
  readonly queued: number
  /** Pushes held for the person's quiet hours (summarised when they end; quiet/QuietGate.ts); absent when none. */
  readonly held?: number
}

/** What an answer says of its pushes: "Accepted by 2 of 3 devices." and, when some are, "1 queued for retry." */
export const sentText = (summary: Pick<SendSummary, "accepted" | "queued">, devices: number): ReadonlyArray<string> => [
  `Accepted by ${summary.accepted} of ${devices} device${devices === 1 ? "" : "s"}.`,
  ...(summary.queued > 0 ? [`${summary.queued} queued for retry.`] : [])
]

/**
 * `sendNow`: the caller will send these receipts itself right after its
 * commit, so the worker leaves them alone until the caller's wait is over
 * (else a worker poll between the commit and the caller's claim would take
 * them, and the caller would under-report what was accepted). If the caller's
 * process dies first, the worker sends them when that grace ends.
 */
export interface EnqueueOptions {
  readonly sendNow?: boolean
}

export interface OutboxShape {
  /**
   * Writes pushes as `pending` receipts, in the caller's unit of work or
   * transaction when there is one; answers their ids in order. Call `sendNow`
   * or `wake` once they are committed.
   */
  readonly enqueue: (pushes: ReadonlyArray<NewPush>, options?: EnqueueOptions) => Effect.Effect<ReadonlyArray<string>>
  /**
   * Delivers items to people's devices: `enqueue` of one push per device (in
   * the caller's unit of work or transaction); answers the receipt ids in order.
   */
  readonly toDevices: (deliveries: Delivery | ReadonlyArray<Delivery>, options?: EnqueueOptions) => Effect.Effect<ReadonlyArray<string>>
  /**
   * After the commit of receipts queued with `sendNow`: sends them, to the end
   * even if the caller goes away (else they would wait for the worker's grace).
   */
  readonly sendCommitted: (receiptIds: ReadonlyArray<string>) => Effect.Effect<SendSummary>
  /**
   * Sends these pending receipts now and waits (at most the configured request
   * wait) for the providers. Sends still running then finish in the background.
   */
  readonly sendNow: (receiptIds: ReadonlyArray<string>) => Effect.Effect<SendSummary>
  /** Tells this node's worker that work is due (e.g. after committing receipts it will not send itself). */
  readonly wake: Effect.Effect<void>
  /**
   * One iteration of this node's drain worker (`runtime/Workers.ts` runs it
   * in a loop): claim and send due receipts batch after batch while the batches
   * come full (the next claimed while the one before is sent; stale claims and
   * orphans settled when due), then wait for a wake-up or the poll interval.
   */
  readonly drain: Effect.Effect<void>
  /** One heartbeat of this node in `outbox_nodes`, due every `heartbeatEvery` (a worker of its own). */
  readonly heartbeat: Effect.Effect<void>
  readonly heartbeatEvery: Duration.Duration
  /** `HERALD_PUSH_PAUSED`: nothing is sent, so no drain worker runs. */
  readonly paused: boolean
  /**
   * This process's name in `outbox_nodes` (it heartbeats there), and how long
   * a node may be silent before its claims are given up: for every queue
   * that claims before sending (live activities too).
   */
  readonly node: string
  readonly staleClaim: Duration.Duration
}

/**
 * Waits for `fiber` to end, at most `wait` (slept on the caller's Clock), and
 * never interrupts it. What `Fiber.await(fiber).pipe(Effect.timeoutOption(wait))`
 * does, for one fiber less per request: that race forks both of its sides.
 */
export const awaitAtMost = (fiber: Fiber.Fiber<unknown, unknown>, wait: Duration.Duration): Effect.Effect<void> =>
  Effect.withFiber((caller) =>
    Effect.callback<void>((resume) => {
      let waiting = true
      const sleeper = Effect.runForkWith(caller.context)(Effect.sleep(wait))
      let stopWatching = () => {}
      const done = () => {
        if (!waiting) return
        waiting = false
        stopWatching()
        sleeper.interruptUnsafe()
        resume(Effect.void)
      }
      stopWatching = fiber.addObserver(done)
      if (waiting) sleeper.addObserver(done)
      // The caller interrupted: stop the timer, leave `fiber` running.
      return Effect.sync(() => {
        waiting = false
        stopWatching()
        sleeper.interruptUnsafe()
      })
    })
  )

export class Outbox extends Context.Service<Outbox, OutboxShape>()("herald/Outbox") {
  static readonly layerNoDeps = Layer.effect(Outbox, Effect.gen(function*() {
    const repo = yield* OutboxRepo
    const gateway = yield* PushGateway
    const quiet = yield* QuietGate
    const config = yield* OutboxConfig
    const node = yield* makeId("rcp")
    const permits = yield* Semaphore.make(config.concurrency)
    const wakeups = yield* Queue.sliding<void>(1)
    const outboxScope = yield* Effect.scope

    // Paused, nothing sends now: the rows are the worker's as soon as it runs.
    const graceSeconds = config.paused ? 0 : Duration.toSeconds(config.requestWait) + 5
    const receiptRows = (pushes: ReadonlyArray<NewPush>, options?: EnqueueOptions) =>
      Effect.gen(function*() {
        const grace = options?.sendNow === true ? graceSeconds : 0
        const rows: Array<ReceiptRow> = []
        for (const push of pushes) rows.push({ ...push, id: yield* makeId("rcp"), grace })
        return rows
      })

    // No span: the rows join the caller's unit of work, whose statement has its own.
    // Quiet hours apply here, to every push (quiet/QuietGate.ts): a held push gets an id that no receipt has.
    const enqueue = (pushes: ReadonlyArray<NewPush>, options?: EnqueueOptions) =>
      pushes.length === 0 ? Effect.succeed([]) : Effect.gen(function*() {
        const gated = yield* quiet.apply(pushes, yield* Clock.currentTimeMillis)
        const sending = gated.flatMap((g) => "push" in g ? [g.push] : [])
        const rows = yield* receiptRows(sending, options)
        yield* repo.insertReceipts(rows)
        let next = 0
        return gated.map((g) => "push" in g ? rows[next++]!.id : g.heldId)
      })

    // Concurrent requests claim their receipts in one statement.
    const claimIds = batched((lists: NonEmptyReadonlyArray<ReadonlyArray<string>>) =>
      repo.claimIds(lists.flat(), node).pipe(
        Effect.map(({ claimed, undecodable }): ReadonlyArray<Claim> => {
          const byId = new Map(claimed.map((row) => [row.id, row]))
          const badById = new Map(undecodable.map((row) => [row.id, row]))
          return lists.map((ids) => ({
            claimed: ids.flatMap((id) => byId.get(id) ?? []),
            undecodable: ids.flatMap((id) => badById.get(id) ?? [])
          }))
        })
      )
    )

    const resultOf = (row: Claimed, outcome: PushOutcome, now: number, random: number): Result => {
      switch (outcome._tag) {
        case "Accepted":
          return { id: row.id, status: "accepted", providerId: outcome.providerId, errorCode: null, nextAttemptAt: null }
        case "Rejected":
          return { id: row.id, status: "error", providerId: null, errorCode: outcome.reason, nextAttemptAt: null }
        case "Retry": {
          if (row.attempts >= config.maxAttempts) {
            return { id: row.id, status: "error", providerId: null, errorCode: outcome.reason, nextAttemptAt: null }
          }
          const wait = backoffDelay(row.attempts, outcome.retryAfter, random)
          return {
            id: row.id,
            status: "pending",
            providerId: null,
            errorCode: outcome.reason,
            nextAttemptAt: new Date(now + Duration.toMillis(wait)).toISOString()
          }
        }
      }
    }

    // Concurrent sends record their answers in one statement.
    const record = batched((lists: NonEmptyReadonlyArray<ReadonlyArray<Result>>) =>
      repo.record(lists.flat(), node).pipe(Effect.as(lists.map(() => undefined)))
    )

    /** One provider call under the node's concurrency bound. Never fails. */
    const sendOne = (row: Claimed) =>
      Effect.gen(function*() {
        if (!row.active) {
          return { id: row.id, status: "error", providerId: null, errorCode: "DeviceInactive", nextAttemptAt: null } satisfies Result
        }
        const outcome = yield* permits.withPermits(1)(gateway.send(
          {
            deviceId: row.deviceId,
            platform: row.platform,
            token: row.pushToken,
            ...(row.environment !== null ? { environment: row.environment } : {}),
            ...(row.webPushP256dh !== null && row.webPushAuth !== null
              ? { webPush: { p256dh: row.webPushP256dh, auth: row.webPushAuth } }
              : {})
          },
          row.message
        ))
        return resultOf(row, outcome, yield* Clock.currentTimeMillis, yield* Random.next)
      })

    /** A claimed row that does not decode can never be sent: it fails for good, and says why in the log. */
    const settleUndecodable = (row: Undecodable) =>
      Effect.logError("push outbox claimed a receipt whose stored row does not decode; it is settled as failed").pipe(
        Effect.annotateLogs({ receiptId: row.id, decodeError: row.error }),
        Effect.as<Result>({ id: row.id, status: "error", providerId: null, errorCode: "UndecodableMessage", nextAttemptAt: null })
      )

    /**
     * Sends claimed rows and records every answer (the undecodable rows' failures
     * too) in one statement. Runs to the end once started (shutdown waits for
     * it), so a claim is always resolved by this process unless the process dies.
     */
    const sendClaimed = ({ claimed, undecodable }: Claim, tally?: Ref.Ref<SendSummary>) =>
      Effect.forEach([
        ...claimed.map(sendOne),
        ...undecodable.map(settleUndecodable)
      ], (send) =>
        send.pipe(Effect.tap((result) =>
          tally === undefined ? Effect.void : Ref.update(tally, (t) => ({
            accepted: t.accepted + (result.status === "accepted" ? 1 : 0),
            failed: t.failed + (result.status === "error" ? 1 : 0),
            queued: t.queued - (result.status === "pending" ? 0 : 1)
          })))), { concurrency: "unbounded" }).pipe(
        Effect.flatMap((results) =>
          Effect.andThen(
            record(results),
            results.some((r) => r.status === "pending") ? Queue.offer(wakeups, undefined) : Effect.void
          )),
        Effect.uninterruptible,
        Effect.tapCause((cause) => Effect.logError("push outbox could not record provider answers", cause))
      )

    // Built once: `Effect.withSpan(name)` captures a stack trace each time it is called.
    const sendNowSpan = Effect.withSpan("Outbox.sendNow")
    const sendNow = (ids: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const receiptIds = ids.filter((id) => !id.startsWith(HELD_PREFIX))
        const held = ids.length - receiptIds.length
        const tally = yield* Ref.make<SendSummary>({ accepted: 0, failed: 0, queued: receiptIds.length, ...(held > 0 ? { held } : {}) })
        if (config.paused || receiptIds.length === 0) return yield* Ref.get(tally)
        // Claim and sends run in the outbox's scope: a caller that stops
        // waiting (or disconnects) interrupts neither, so no claim is left
        // without its send.
        const fiber = yield* Effect.forkIn(
          Effect.flatMap(claimIds(receiptIds), (rows) => sendClaimed(rows, tally)).pipe(Effect.uninterruptible),
          outboxScope
        )
        yield* awaitAtMost(fiber, config.requestWait)
        return yield* Ref.get(tally)
      }).pipe(sendNowSpan)

    // This node is alive from the start: a request may claim (and must keep) receipts before the first beat of its worker.
    const heartbeat = repo.heartbeat(node)
    yield* heartbeat

    // Claims left by a process that died mid-send (the provider may have the
    // push, so it is not sent again; only claims whose node has stopped
    // heartbeating are given up) and receipts of removed devices are settled
    // every quarter of `staleClaim`.
    const staleSeconds = Duration.toSeconds(config.staleClaim)
    const sweepEvery = Duration.toMillis(config.staleClaim) / 4
    const lastSweep = yield* Ref.make(Number.NEGATIVE_INFINITY)
    const sweepIfDue = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      if (now - (yield* Ref.get(lastSweep)) > sweepEvery) {
        yield* repo.expireStaleClaims(staleSeconds)
        yield* repo.settleOrphans
        yield* Ref.set(lastSweep, now)
      }
    })
    // One pass: claims batch after batch while they come full, the next claimed and sent while the one
    // before is still at its providers (two in flight), so the providers never wait through a batch's
    // claim and record round trips. It ends when all it claimed is sent and recorded.
    const drainOnce = Effect.gen(function*() {
      let previous: Fiber.Fiber<void> | undefined
      let taken: number
      do {
        yield* sweepIfDue
        const claim = yield* repo.claimDue(config.batchSize, node)
        taken = claim.claimed.length + claim.undecodable.length
        const sending = taken > 0 ? yield* Effect.forkIn(sendClaimed(claim), outboxScope) : undefined
        if (previous !== undefined) yield* Fiber.join(previous)
        previous = sending
      } while (taken === config.batchSize)
      if (previous !== undefined) yield* Fiber.join(previous)
    }).pipe(Effect.withSpan("Outbox.drain"))
    // A pass ends on a claim that was not full: then wait to be woken, or for the poll.
    const drain = Effect.andThen(drainOnce, Queue.take(wakeups).pipe(Effect.timeoutOption(config.pollInterval), Effect.asVoid))

    return Outbox.of({
      enqueue,
      toDevices: (deliveries, options) => enqueue(pushesOf("devices" in deliveries ? [deliveries] : deliveries), options),
      sendCommitted: (receiptIds) => Effect.uninterruptible(sendNow(receiptIds)),
      sendNow,
      wake: Queue.offer(wakeups, undefined).pipe(Effect.asVoid),
      drain,
      heartbeat,
      heartbeatEvery: Duration.times(config.staleClaim, 0.25),
      paused: config.paused,
      node,
      staleClaim: config.staleClaim
    })
  }))

  /** Needs `PushGateway`, `SqlClient` and `PgClient`. */
  static readonly layer = Outbox.layerNoDeps.pipe(Layer.provide([OutboxConfig.layer, OutboxRepo.layer, QuietGate.layer]))
}
