/**
 * How the durable push outbox drains: concurrency, batch size, retry budget,
 * and the operator's pause switch (accept and queue pushes, send none, e.g.
 * while a provider credential is being replaced; unpausing drains the queue).
 */
import { Config, Context, Duration, Layer } from "effect"
import * as Env from "./Variable.ts"

export interface OutboxConfigShape {
  /** Provider requests in flight at once per node, background and request paths together. */
  readonly concurrency: number
  /** Receipts one worker pass claims. */
  readonly batchSize: number
  /** Attempts per receipt before it ends as `error`. */
  readonly maxAttempts: number
  /** How often a node looks for due work it was not woken for (other nodes' rows, retries). */
  readonly pollInterval: Duration.Duration
  /** How long a request waits for its own pushes before answering with what was accepted so far. */
  readonly requestWait: Duration.Duration
  /** A claim older than this, of a node silent as long, belongs to a process that died mid-send (OutboxRepo.expireStaleClaims). */
  readonly staleClaim: Duration.Duration
  readonly paused: boolean
}

export const outboxVariables = {
  concurrency: Env.integer("HERALD_PUSH_CONCURRENCY", {
    default: 64,
    min: 1,
    description: "Push provider requests in flight at once on this node."
  }),
  staleClaimSeconds: Env.integer("HERALD_PUSH_STALE_CLAIM_SECONDS", {
    default: 120,
    min: 2,
    max: 3600,
    description:
      "How long a node may be silent (no heartbeat) before its claimed pushes are settled: an alert it was sending becomes `unknown` (never sent twice), a withdrawal is sent again. Nodes heartbeat every quarter of it."
  }),
  paused: Env.boolean("HERALD_PUSH_PAUSED", {
    default: false,
    description:
      "`true`: accept and durably queue pushes but send none (answers say `accepted: 0`), e.g. while a provider credential is replaced; restarting without it drains the queue."
  })
}

export const outboxConfig: Config.Config<OutboxConfigShape> = Env.configOf(outboxVariables).pipe(Config.map((c) => ({
  concurrency: c.concurrency,
  batchSize: 100,
  maxAttempts: 8,
  pollInterval: Duration.millis(500),
  requestWait: Duration.seconds(5),
  staleClaim: Duration.seconds(c.staleClaimSeconds),
  paused: c.paused
})))

export class OutboxConfig extends Context.Service<OutboxConfig, OutboxConfigShape>()("herald/OutboxConfig") {
  static readonly layer = Layer.effect(OutboxConfig, outboxConfig)
}
