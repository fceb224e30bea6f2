/**
 * Reply events on their way out. When a prompt ends, `enqueueOutcome` writes
 * one delivery per subscribed endpoint in the transition's transaction (so an
 * ended prompt always has its events); each node's worker leases due rows,
 * signs (Standard Webhooks, with the secret read at send time: a rotation
 * applies to retries not yet sent), POSTs through the SSRF-guarded client and
 * appends the attempt to the row's log, retrying on the Svix schedule.
 */
import { ReplyWebhookAttempt } from "@herald/api"
import type { Interaction, ReplyEventType } from "@herald/api"
import { Clock, Context, Duration, Effect, Layer, Queue, Random } from "effect"
import { RETRY_SCHEDULE_SECONDS, WebhookConfig } from "../config/WebhookConfig.ts"
import type { Routing } from "../interactions/Repo.ts"
import { makeId } from "../lib/Ids.ts"
import { post } from "./Outbound.ts"
import type { OutboundResult } from "./Outbound.ts"
import { eventPayload } from "./Payloads.ts"
import { WebhooksRepo } from "./Repo.ts"
import type { AttemptRecord, DueDelivery } from "./Repo.ts"
import { signatureHeaders } from "./Signing.ts"

/** decisions.md: eight attempts in all, then `failed`. */
export const MAX_ATTEMPTS = RETRY_SCHEDULE_SECONDS.length + 1

const BATCH = 50

export class Deliveries extends Context.Service<Deliveries, {
  /** Queues the outcome event for every subscribed endpoint (in the caller's transaction); answers how many. */
  readonly enqueueOutcome: (interaction: Interaction, routing: Routing, type: ReplyEventType) => Effect.Effect<number>
  /** Tells this node's worker that deliveries are due (after the enqueuing transaction committed). */
  readonly wake: Effect.Effect<void>
  /** Sends one delivery now, outside the queue, and records the attempt (sample events). */
  readonly sendNow: (id: string) => Effect.Effect<void>
}>()("herald/Deliveries") {
  static readonly layerNoDeps = Layer.effect(Deliveries, Effect.gen(function*() {
    const repo = yield* WebhooksRepo
    const config = yield* WebhookConfig
    const wakeups = yield* Queue.sliding<void>(1)
    const policy = { allowPrivateNetwork: config.allowPrivateNetwork, timeout: config.attemptTimeout, maxRedirects: 3 }
    // Longer than any attempt can run; a lease outliving its node makes the delivery due again.
    const leaseSeconds = Math.ceil(Duration.toSeconds(config.attemptTimeout)) + 5

    const enqueueOutcome = Effect.fn("Deliveries.enqueueOutcome")(
      function*(interaction: Interaction, routing: Routing, type: ReplyEventType) {
        const targets = yield* repo.targets(routing, type)
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
        yield* repo.insertDeliveries(rows)
        return rows.length
      }
    )

    /** The delay before attempt `attempt + 1`, scaled, with ±10 % jitter. */
    const retryDelay = (attempt: number) =>
      Effect.map(Random.next, (r) => RETRY_SCHEDULE_SECONDS[attempt - 1]! * 1000 * config.retryTimeScale * (0.9 + 0.2 * r))

    const outcomeOf = (result: OutboundResult, attempt: number, queued: boolean) =>
      Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        const responseCode = result._tag === "Answered" ? result.status : null
        const delivered = responseCode !== null && responseCode >= 200 && responseCode < 300
        const gone = responseCode === 410
        const error = delivered ? null
          : result._tag === "Answered" ? `HTTP ${result.status}`
          : result.reason
        const final = delivered || gone || !queued || attempt >= MAX_ATTEMPTS
        const status: AttemptRecord["status"] = delivered ? "delivered" : final ? "failed" : "retrying"
        const nextAttemptAt = final ? null : new Date(now + (yield* retryDelay(attempt))).toISOString()
        const entry = new ReplyWebhookAttempt({
          attempt,
          attemptedAt: new Date(now - Math.round(result.latencyMs)).toISOString(),
          status,
          latencyMs: Math.round(result.latencyMs),
          responseCode,
          error
        }, { disableChecks: true })
        return { record: { entry, status, nextAttemptAt } satisfies AttemptRecord, gone }
      })

    /** One attempt: sign with the current secret, POST, record. */
    const attempt = (delivery: DueDelivery, queued: boolean) =>
      Effect.gen(function*() {
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
        const { gone, record } = yield* outcomeOf(result, delivery.attempts + 1, queued)
        yield* repo.recordAttempt(delivery.id, record)
        if (gone) yield* repo.disable(delivery.webhookId)
      }).pipe(Effect.withSpan("Deliveries.attempt", { attributes: { delivery: delivery.id } }))

    const sendNow = (id: string) =>
      Effect.flatMap(repo.sendable(id), (delivery) => delivery === undefined ? Effect.void : attempt(delivery, false))

    // Each attempt runs on its own fiber holding one permit, so a slow endpoint
    // (up to the 10 s timeout) never holds up the others.
    let inFlight = 0
    const scope = yield* Effect.scope
    const worker = Effect.gen(function*() {
      while (true) {
        const free = Math.min(BATCH, config.concurrency - inFlight)
        const due = free > 0 ? yield* repo.claimDue(free, leaseSeconds) : []
        for (const delivery of due) {
          inFlight++
          yield* Effect.forkIn(
            attempt(delivery, true).pipe(
              Effect.catchCause((cause) => Effect.logWarning("reply webhook delivery attempt failed", cause)),
              Effect.ensuring(Effect.sync(() => inFlight--).pipe(Effect.andThen(Queue.offer(wakeups, undefined))))
            ),
            scope
          )
        }
        if (due.length < free || free === 0) yield* Queue.take(wakeups).pipe(Effect.timeoutOption(config.pollInterval))
      }
    }).pipe(
      // A database outage must not end the worker: log, wait, go on.
      Effect.catchCause((cause) => Effect.logWarning("reply webhook worker failed; retrying", cause)),
      Effect.andThen(Effect.sleep(config.pollInterval)),
      Effect.forever
    )
    yield* Effect.forkScoped(worker)

    return Deliveries.of({ enqueueOutcome, wake: Queue.offer(wakeups, undefined).pipe(Effect.asVoid), sendNow })
  }))

  static readonly layer = Deliveries.layerNoDeps.pipe(
    Layer.provideMerge(WebhooksRepo.layer),
    Layer.provideMerge(WebhookConfig.layer)
  )
}
