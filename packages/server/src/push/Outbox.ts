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
 * accepted; a background worker per node drains whatever is due (retries, a
 * request that stopped waiting, rows left by a restart), claiming with
 * `FOR UPDATE SKIP LOCKED` so several nodes share the table. Nothing holds a
 * connection while a provider answers (the embedded database has one).
 */
import { Clock, Context, Duration, Effect, Fiber, Layer, Queue, Random, Ref, Schema, Semaphore } from "effect"
import type { NonEmptyReadonlyArray } from "effect/Array"
import { SqlClient } from "effect/sql"
import type { Statement } from "effect/sql"
import { batched } from "../db/Batching.ts"
import { OutboxConfig } from "../config/OutboxConfig.ts"
import { makeId } from "../lib/Ids.ts"
import { backoffDelay, PushGateway } from "./PushGateway.ts"
import type { PushMessage, PushOutcome } from "./PushMessage.ts"

export interface NewPush {
  readonly userId: string
  readonly deviceId: string
  readonly origin: "event" | "notification" | "interaction"
  readonly itemId: string
  readonly purpose: "alert" | "withdraw"
  readonly message: PushMessage
}

export interface SendSummary {
  /** Receipts whose provider accepted before the answer. */
  readonly accepted: number
  /** Receipts refused for good or out of attempts. */
  readonly failed: number
  /** Receipts still queued (transient failure, or not answered within the wait). */
  readonly queued: number
}

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
   * The INSERT of `pushes` as `pending` receipts and their ids, for a caller
   * that writes them in one statement with its own rows (a CTE member).
   */
  readonly enqueueStatement: (pushes: ReadonlyArray<NewPush>, options?: EnqueueOptions) => Effect.Effect<{
    readonly ids: ReadonlyArray<string>
    readonly statement: Statement.Statement<unknown>
  }>
  /**
   * Commits pushes as `pending` receipts, in the caller's transaction when
   * there is one; answers their ids in order. Call `sendNow` or `wake` after
   * the transaction commits.
   */
  readonly enqueue: (pushes: ReadonlyArray<NewPush>, options?: EnqueueOptions) => Effect.Effect<ReadonlyArray<string>>
  /**
   * Sends these pending receipts now and waits (at most the configured request
   * wait) for the providers. Sends still running then finish in the background.
   */
  readonly sendNow: (receiptIds: ReadonlyArray<string>) => Effect.Effect<SendSummary>
  /** Tells this node's worker that work is due (e.g. after committing receipts it will not send itself). */
  readonly wake: Effect.Effect<void>
  /**
   * This process's name in `outbox_nodes` (it heartbeats there), and how long
   * a node may be silent before its claims are given up: for every queue
   * that claims before sending (live activities too).
   */
  readonly node: string
  readonly staleClaim: Duration.Duration
}

const Claimed = Schema.Struct({
  id: Schema.String,
  deviceId: Schema.String,
  attempts: Schema.Number,
  message: Schema.Unknown,
  platform: Schema.Literals(["ios", "android"]),
  pushToken: Schema.String,
  environment: Schema.NullOr(Schema.Literals(["sandbox", "production"])),
  active: Schema.Boolean
})
type Claimed = typeof Claimed.Type
const decodeClaimed = Schema.decodeUnknownSync(Schema.Array(Claimed))

interface Result {
  readonly id: string
  readonly status: "pending" | "accepted" | "error"
  readonly providerId: string | null
  readonly errorCode: string | null
  /** For `pending`: when to try again. */
  readonly nextAttemptAt: string | null
}

export class Outbox extends Context.Service<Outbox, OutboxShape>()("herald/Outbox") {
  static readonly layerNoDeps = Layer.effect(Outbox, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const gateway = yield* PushGateway
    const config = yield* OutboxConfig
    const node = yield* makeId("rcp")
    const permits = yield* Semaphore.make(config.concurrency)
    const wakeups = yield* Queue.sliding<void>(1)
    const outboxScope = yield* Effect.scope

    // Paused, nothing sends now: the rows are the worker's as soon as it runs.
    const graceSeconds = config.paused ? 0 : Duration.toSeconds(config.requestWait) + 5
    const enqueueStatement = (pushes: ReadonlyArray<NewPush>, options?: EnqueueOptions) =>
      Effect.gen(function*() {
        const ids: Array<string> = []
        for (let i = 0; i < pushes.length; i++) ids.push(yield* makeId("rcp"))
        const rows = pushes.map((p, i) => ({ ...p, id: ids[i]! }))
        const grace = options?.sendNow === true ? graceSeconds : 0
        const statement = sql`
          INSERT INTO push_receipts (id, user_id, device_id, origin, item_id, purpose, message, next_attempt_at)
          SELECT id, "userId", "deviceId", origin, "itemId", purpose, message, now() + make_interval(secs => ${grace})
          FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
            AS r(id text, "userId" text, "deviceId" text, origin text, "itemId" text, purpose text, message jsonb)`
        return { ids, statement }
      })

    const enqueue = (pushes: ReadonlyArray<NewPush>, options?: EnqueueOptions) =>
      pushes.length === 0 ? Effect.succeed([]) : Effect.flatMap(enqueueStatement(pushes, options), ({ ids, statement }) =>
        Effect.as(statement, ids)).pipe(Effect.orDie, Effect.withSpan("Outbox.enqueue"))

    // Claiming commits `sending` before any provider call: the at-most-once line.
    const claimed = (rows: ReadonlyArray<unknown>) => decodeClaimed(rows)
    const claimColumns = sql`
      r.id, r.device_id, r.attempts, r.message, d.platform, d.push_token,
      d.live_activity_token_environment AS environment, d.active`

    // Only pushes whose device still exists are claimed (a removed device's receipts stay as history).
    const claimIdsNow = (ids: ReadonlyArray<string>) =>
      sql`
        WITH c AS (
          SELECT r.id FROM push_receipts r JOIN devices d ON d.id = r.device_id
          WHERE r.id = ANY(${ids}::text[]) AND r.status = 'pending'
          FOR UPDATE OF r SKIP LOCKED)
        UPDATE push_receipts r SET status = 'sending', claimed_at = now(), claimed_by = ${node}, attempts = r.attempts + 1
        FROM c, devices d WHERE r.id = c.id AND r.id = ANY(${ids}::text[]) AND d.id = r.device_id
        RETURNING ${claimColumns}`.pipe(Effect.map(claimed))

    // Concurrent requests claim their receipts in one statement.
    const claimIds = batched((lists: NonEmptyReadonlyArray<ReadonlyArray<string>>) =>
      claimIdsNow(lists.flat()).pipe(
        Effect.map((rows) => {
          const byId = new Map(rows.map((row) => [row.id, row]))
          return lists.map((ids) => ids.flatMap((id) => byId.get(id) ?? []))
        }),
        Effect.orDie
      )
    )

    const claimDue = sql`
      WITH c AS (
        SELECT r.id FROM push_receipts r JOIN devices d ON d.id = r.device_id
        WHERE r.status = 'pending' AND r.next_attempt_at <= now()
        ORDER BY r.next_attempt_at LIMIT ${config.batchSize}
        FOR UPDATE OF r SKIP LOCKED)
      UPDATE push_receipts r SET status = 'sending', claimed_at = now(), claimed_by = ${node}, attempts = r.attempts + 1
      FROM c, devices d WHERE r.id = c.id AND d.id = r.device_id
      RETURNING ${claimColumns}`.pipe(Effect.map(claimed))

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

    // `r.id = ANY(…)` lets the planner find the rows by key (it cannot size the record set).
    // A push to retry whose device was removed while it was at the provider will never go:
    // it ends as the removal would have ended it.
    const recordNow = (results: ReadonlyArray<Result>) =>
      results.length === 0 ? Effect.void : sql`
        UPDATE push_receipts AS r SET
          status = CASE WHEN v.status = 'pending' AND NOT EXISTS (SELECT 1 FROM devices d WHERE d.id = r.device_id)
                   THEN 'error' ELSE v.status END,
          error_code = CASE WHEN v.status = 'pending' AND NOT EXISTS (SELECT 1 FROM devices d WHERE d.id = r.device_id)
                       THEN 'DeviceRemoved' ELSE v."errorCode" END,
          provider_id = v."providerId",
          checked_at = now(), claimed_at = NULL, claimed_by = NULL,
          next_attempt_at = COALESCE(v."nextAttemptAt", r.next_attempt_at)
        FROM jsonb_to_recordset(${JSON.stringify(results)}::jsonb)
          AS v(id text, status text, "providerId" text, "errorCode" text, "nextAttemptAt" timestamptz)
        WHERE r.id = v.id AND r.id = ANY(${results.map((r) => r.id)}::text[])
          AND r.status = 'sending' AND r.claimed_by = ${node}`.pipe(Effect.asVoid)

    // Concurrent sends record their answers in one statement.
    const record = batched((lists: NonEmptyReadonlyArray<ReadonlyArray<Result>>) =>
      recordNow(lists.flat()).pipe(Effect.as(lists.map(() => undefined)), Effect.orDie)
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
            ...(row.environment !== null ? { environment: row.environment } : {})
          },
          row.message as PushMessage
        ))
        return resultOf(row, outcome, yield* Clock.currentTimeMillis, yield* Random.next)
      })

    /**
     * Sends claimed rows and records every answer in one statement. Runs to the
     * end once started (shutdown waits for it), so a claim is always resolved
     * by this process unless the process dies.
     */
    const sendClaimed = (rows: ReadonlyArray<Claimed>, tally?: Ref.Ref<SendSummary>) =>
      Effect.forEach(rows, (row) =>
        sendOne(row).pipe(Effect.tap((result) =>
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
        Effect.tapCause((cause) => Effect.logError("push outbox could not record provider answers", cause)),
        Effect.orDie
      )

    const sendNow = (receiptIds: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const tally = yield* Ref.make<SendSummary>({ accepted: 0, failed: 0, queued: receiptIds.length })
        if (config.paused || receiptIds.length === 0) return yield* Ref.get(tally)
        // Claim and sends run in the outbox's scope: a caller that stops
        // waiting (or disconnects) interrupts neither, so no claim is left
        // without its send.
        const fiber = yield* Effect.forkIn(
          Effect.flatMap(claimIds(receiptIds), (rows) => sendClaimed(rows, tally)).pipe(Effect.uninterruptible),
          outboxScope
        )
        yield* Fiber.await(fiber).pipe(Effect.timeoutOption(config.requestWait))
        return yield* Ref.get(tally)
      }).pipe(Effect.withSpan("Outbox.sendNow"))

    // Claims left by a process that died mid-send: the provider may have the
    // push, so it is not sent again. Only claims whose node has stopped
    // heartbeating (and older than that silence) are given up.
    const staleSeconds = Duration.toSeconds(config.staleClaim)
    const expireStaleClaims = sql`
      UPDATE push_receipts SET status = 'unknown', checked_at = now(), claimed_at = NULL
      WHERE status = 'sending' AND claimed_at < now() - make_interval(secs => ${staleSeconds})
        AND claimed_by NOT IN (
          SELECT node FROM outbox_nodes WHERE seen_at > now() - make_interval(secs => ${staleSeconds}))`.pipe(
      Effect.asVoid
    )

    // A push queued for a device removed meanwhile (the removal settles those it sees) will never go.
    const settleOrphans = sql`
      UPDATE push_receipts r SET status = 'error', error_code = 'DeviceRemoved', checked_at = now()
      WHERE r.status = 'pending' AND NOT EXISTS (SELECT 1 FROM devices d WHERE d.id = r.device_id)`.pipe(Effect.asVoid)

    // This node's heartbeat, on its own fiber so a worker busy with slow
    // providers never looks dead. Nodes silent for a day are forgotten.
    const heartbeat = sql`
      INSERT INTO outbox_nodes (node) VALUES (${node}) ON CONFLICT (node) DO UPDATE SET seen_at = now()`.pipe(
      Effect.andThen(sql`DELETE FROM outbox_nodes WHERE seen_at < now() - interval '1 day'`),
      Effect.asVoid
    )
    yield* heartbeat.pipe(Effect.orDie)
    yield* heartbeat.pipe(
      Effect.catchCause((cause) => Effect.logWarning("push outbox heartbeat failed", cause)),
      Effect.andThen(Effect.sleep(Duration.times(config.staleClaim, 0.25))),
      Effect.forever,
      Effect.forkScoped
    )

    const drainOnce = Effect.gen(function*() {
      const rows = yield* claimDue
      if (rows.length > 0) yield* sendClaimed(rows)
      return rows.length
    })

    const worker = Effect.gen(function*() {
      let lastSweep = Number.NEGATIVE_INFINITY
      while (true) {
        const now = yield* Clock.currentTimeMillis
        if (now - lastSweep > Duration.toMillis(config.staleClaim) / 4) {
          yield* expireStaleClaims
          yield* settleOrphans
          lastSweep = now
        }
        const claimedCount = yield* drainOnce
        if (claimedCount < config.batchSize) yield* Queue.take(wakeups).pipe(Effect.timeoutOption(config.pollInterval))
      }
    }).pipe(
      // A database outage must not end the worker: log, wait, go on.
      Effect.catchCause((cause) => Effect.logWarning("push outbox worker failed; retrying", cause)),
      Effect.andThen(Effect.sleep(config.pollInterval)),
      Effect.forever
    )

    if (!config.paused) yield* Effect.forkScoped(worker)
    else yield* Effect.logWarning("push delivery is paused (HERALD_PUSH_PAUSED): pushes are queued, none are sent")

    return Outbox.of({
      enqueueStatement,
      enqueue,
      sendNow,
      wake: Queue.offer(wakeups, undefined).pipe(Effect.asVoid),
      node,
      staleClaim: config.staleClaim
    })
  }))

  /** Needs `PushGateway` and `SqlClient`. */
  static readonly layer = Outbox.layerNoDeps.pipe(Layer.provide(OutboxConfig.layer))
}
