/**
 * Reply events on their way out. When a prompt ends, `enqueueOutcome` writes
 * one delivery per subscribed endpoint in the transition's transaction (so an
 * ended prompt always has its events). The delivery worker (`drain`, run by
 * `runtime/Workers.ts`) leases due rows, each lease beginning an attempt that
 * is committed before the request leaves; it signs (Standard Webhooks, with
 * the secret read at send time: a rotation applies to retries not yet sent),
 * POSTs through the SSRF-guarded client and completes the attempt in the
 * row's log, retrying on the Svix schedule — except an attempt the URL rules
 * refused (nothing was sent: retrying a refusal cannot succeed), which fails
 * the delivery at once, as the test endpoint does. The sweeper (`closeInterrupted`)
 * logs an attempt a dead node left open as interrupted: the receiver may have
 * got it, so it is on record, and the event goes again with the same id.
 */
import { ReplyWebhookAttempt } from "@herald/api"
import type { Interaction, ReplyEventType } from "@herald/api"
import { Clock, Context, Duration, Effect, Layer, Queue, Random } from "effect"
import { connectorTarget, ConnectorTargets } from "../connectors/Targets.ts"
import { RETRY_SCHEDULE_SECONDS, WebhookConfig } from "../config/WebhookConfig.ts"
import type { Routing } from "../interactions/InteractionsRepo.ts"
import { makeId } from "../lib/Ids.ts"
import { DeliveriesRepo } from "./DeliveriesRepo.ts"
import type { AttemptRecord, DueDelivery, OpenAttempt } from "./DeliveriesRepo.ts"
import { post } from "./Outbound.ts"
import { eventPayload } from "./Payloads.ts"
import { WebhooksRepo } from "./WebhooksRepo.ts"
import { signatureHeaders } from "./Signing.ts"

/** decisions.md: eight attempts in all, then `failed`. */
export const MAX_ATTEMPTS = RETRY_SCHEDULE_SECONDS.length + 1

/** How often the sweeper looks for attempts left open by a node that died. */
export const SWEEP_INTERVAL = Duration.seconds(5)

/** The `error` of an attempt cut short: no answer was recorded, but the request may have arrived. */
export const INTERRUPTED = "interrupted: Herald stopped during the attempt; the receiver may have got the event"

const BATCH = 50

/** What one attempt came to, before it is judged final or retried. */
interface Outcome {
  readonly attemptedAt: number
  readonly latencyMs: number
  readonly responseCode: number | null
  readonly error: string | null
  /** The URL rules refused the target: the delivery fails at once. */
  readonly refused: boolean
}

export class Deliveries extends Context.Service<Deliveries, {
  /** Queues the outcome event for every subscribed endpoint (in the caller's transaction); answers how many. */
  readonly enqueueOutcome: (interaction: Interaction, routing: Routing, type: ReplyEventType) => Effect.Effect<number>
  /** Tells this node's worker that deliveries are due (after the enqueuing transaction committed). */
  readonly wake: Effect.Effect<void>
  /** Sends one delivery now, outside the queue, and records the attempt (sample events). */
  readonly sendNow: (id: string) => Effect.Effect<void>
  /**
   * One turn of the delivery worker: leases what is due (up to the free
   * concurrency) and starts each attempt on a fiber of its own, a child of the
   * worker's, so a slow endpoint never holds up the others; when nothing more
   * is due, waits for `wake` or the poll interval.
   */
  readonly drain: Effect.Effect<void>
  /** One pass of the sweeper: closes attempts left open past their lease as interrupted. */
  readonly closeInterrupted: Effect.Effect<void>
}>()("herald/Deliveries") {
  static readonly layerNoDeps = Layer.effect(Deliveries, Effect.gen(function*() {
    const webhooks = yield* WebhooksRepo
    const repo = yield* DeliveriesRepo
    const connectors = yield* ConnectorTargets
    const config = yield* WebhookConfig
    const wakeups = yield* Queue.sliding<void>(1)
    const policy = { allowPrivateNetwork: config.allowPrivateNetwork, timeout: config.attemptTimeout, maxRedirects: 3 }
    // Longer than any attempt can run; an attempt outliving its lease was cut short.
    const leaseSeconds = Math.ceil(Duration.toSeconds(config.attemptTimeout)) + 5

    const enqueueOutcome = Effect.fn("Deliveries.enqueueOutcome")(
      function*(interaction: Interaction, routing: Routing, type: ReplyEventType) {
        const targets = yield* webhooks.targets(routing, type)
        if (targets.length === 0) return 0
        const now = new Date(yield* Clock.currentTimeMillis).toISOString()
        const rows = yield* Effect.forEach(targets, (target) =>
          Effect.map(makeId("whd"), (id) => ({
            id,
            userId: routing.userId,
            webhookId: target.id,
            interactionId: interaction.id,
            type,
            payload: eventPayload(target.preset, type, interaction, now),
            nextAttemptAt: now
          })))
        yield* repo.insert(rows)
        return rows.length
      }
    )

    /** The delay before attempt `attempt + 1`, scaled, with ±10 % jitter. */
    const retryDelay = (attempt: number) =>
      Effect.map(Random.next, (r) => RETRY_SCHEDULE_SECONDS[attempt - 1]! * 1000 * config.retryTimeScale * (0.9 + 0.2 * r))

    /** Judges an outcome: delivered, retried on the schedule (queued deliveries only), or failed for good. */
    const recordOf = (outcome: Outcome, attempt: number, queued: boolean) =>
      Effect.gen(function*() {
        const { responseCode } = outcome
        const delivered = responseCode !== null && responseCode >= 200 && responseCode < 300
        const gone = responseCode === 410
        const final = delivered || gone || outcome.refused || !queued || attempt >= MAX_ATTEMPTS
        const status: AttemptRecord["status"] = delivered ? "delivered" : final ? "failed" : "retrying"
        // Counted from the attempt's end: for one cut short, from when it began, so the wait for its
        // lease to lapse is part of the delay rather than added to it.
        const retryAt = outcome.attemptedAt + outcome.latencyMs + (yield* retryDelay(attempt))
        const nextAttemptAt = final ? null : new Date(Math.max(yield* Clock.currentTimeMillis, retryAt)).toISOString()
        const entry = new ReplyWebhookAttempt({
          attempt,
          attemptedAt: new Date(outcome.attemptedAt).toISOString(),
          status,
          latencyMs: Math.round(outcome.latencyMs),
          responseCode,
          error: delivered ? null : outcome.error
        })
        return { record: { entry, status, nextAttemptAt } satisfies AttemptRecord, gone }
      })

    /** One attempt, already begun by its lease: sign with the current secret, POST, complete it. */
    const attempt = (delivery: DueDelivery, queued: boolean) =>
      Effect.gen(function*() {
        // A connector route is not called: the delivery is recorded for the connector, whose gateway
        // fetches it through `callback-access` (decisions.md).
        if (connectorTarget(delivery.url) !== undefined) {
          const attemptedAt = new Date(yield* Clock.currentTimeMillis).toISOString()
          const refused = yield* connectors.record(delivery.id, delivery.url, delivery.payload)
          const recorded = refused === undefined
          const status = recorded ? "delivered" : "failed"
          const entry = new ReplyWebhookAttempt({
            attempt: delivery.attempts + 1,
            attemptedAt,
            status,
            latencyMs: 0,
            responseCode: null,
            error: refused ?? null
          })
          return yield* repo.recordAttempt(delivery.id, { entry, status, nextAttemptAt: null })
        }
        const timestampSeconds = Math.floor((yield* Clock.currentTimeMillis) / 1000)
        const headers: Record<string, string> = {}
        for (const h of delivery.headers) headers[h.name] = h.value
        Object.assign(headers, signatureHeaders({
          secret: delivery.signingSecret,
          id: delivery.id,
          timestampSeconds,
          body: delivery.payload
        }))
        const result = yield* post(policy, { url: delivery.url, headers, body: delivery.payload })
        const latencyMs = Math.round(result.latencyMs)
        const { gone, record } = yield* recordOf({
          attemptedAt: (yield* Clock.currentTimeMillis) - latencyMs,
          latencyMs,
          responseCode: result._tag === "Answered" ? result.status : null,
          error: result._tag === "Answered" ? `HTTP ${result.status}` : result.reason,
          refused: result._tag === "Refused"
        }, delivery.attempts + 1, queued)
        yield* repo.recordAttempt(delivery.id, record)
        if (gone) yield* webhooks.disable(delivery.webhookId)
      }).pipe(Effect.withSpan("Deliveries.attempt", { attributes: { delivery: delivery.id } }))

    const sendNow = (id: string) =>
      Effect.flatMap(repo.start(id, leaseSeconds), (delivery) => delivery === undefined ? Effect.void : attempt(delivery, false))

    // Attempts in flight on this node; each holds one of `config.concurrency` places.
    let inFlight = 0
    const drain = Effect.gen(function*() {
      const free = Math.min(BATCH, config.concurrency - inFlight)
      const due = free > 0 ? yield* repo.claimDue(free, leaseSeconds) : []
      for (const delivery of due) {
        inFlight++
        yield* Effect.forkChild(
          attempt(delivery, true).pipe(
            // One failed attempt (its database write) ends only that attempt: its lease lapses and the sweeper closes it.
            Effect.catchCause((cause) => Effect.logWarning("reply webhook delivery attempt failed", cause)),
            Effect.ensuring(Effect.sync(() => inFlight--).pipe(Effect.andThen(Queue.offer(wakeups, undefined))))
          )
        )
      }
      if (due.length < free || free === 0) yield* Queue.take(wakeups).pipe(Effect.timeoutOption(config.pollInterval))
    }).pipe(Effect.withSpan("Deliveries.drain"))

    /** An attempt cut short: no answer, no latency measured; dated when it began. */
    const interrupted = (open: OpenAttempt) =>
      Effect.gen(function*() {
        const { record } = yield* recordOf(
          { attemptedAt: Date.parse(open.startedAt), latencyMs: 0, responseCode: null, error: INTERRUPTED, refused: false },
          open.attempts + 1,
          open.queued
        )
        yield* repo.recordAttempt(open.id, record)
      })

    const closeInterrupted = Effect.gen(function*() {
      const open = yield* repo.claimInterrupted(BATCH, leaseSeconds)
      yield* Effect.forEach(open, interrupted, { discard: true })
      if (open.length > 0) yield* Queue.offer(wakeups, undefined)
    }).pipe(Effect.withSpan("Deliveries.closeInterrupted"))

    return Deliveries.of({
      enqueueOutcome,
      wake: Queue.offer(wakeups, undefined).pipe(Effect.asVoid),
      sendNow,
      drain,
      closeInterrupted
    })
  }))

  static readonly layer = Deliveries.layerNoDeps.pipe(
    Layer.provideMerge(Layer.mergeAll(WebhooksRepo.layer, DeliveriesRepo.layer, ConnectorTargets.layer)),
    Layer.provideMerge(WebhookConfig.layer)
  )
}
