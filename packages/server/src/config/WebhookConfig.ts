/**
 * How reply-webhook deliveries go out: the SSRF switch, the retry schedule
 * (Svix's, shrinkable for tests by `HERALD_RETRY_TIME_SCALE`), and the worker.
 */
import { Config, Context, Duration, Layer } from "effect"
import * as Env from "./Variable.ts"

/** decisions.md: after the first attempt, retries after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h. */
export const RETRY_SCHEDULE_SECONDS = [5, 300, 1800, 7200, 18_000, 36_000, 36_000] as const

export interface WebhookConfigShape {
  /** `HERALD_ALLOW_PRIVATE_NETWORK_TARGETS=1`: loopback and private addresses allowed (tests, local development). */
  readonly allowPrivateNetwork: boolean
  /** Multiplies every retry delay (default 1). */
  readonly retryTimeScale: number
  /** One attempt's bound (decisions.md: 10 s). */
  readonly attemptTimeout: Duration.Duration
  /** Deliveries in flight at once per node. */
  readonly concurrency: number
  /** How often a node looks for due deliveries it was not woken for (retries, other nodes' rows). */
  readonly pollInterval: Duration.Duration
}

export const webhookVariables = {
  allowPrivateNetwork: Env.boolean("HERALD_ALLOW_PRIVATE_NETWORK_TARGETS", {
    default: false,
    description:
      "`1`: reply webhooks may call loopback and private addresses (plain `http://` only to loopback); link-local and metadata addresses stay refused. For tests and local development."
  }),
  retryTimeScale: Env.number("HERALD_RETRY_TIME_SCALE", {
    default: 1,
    positive: true,
    description: "Multiplies the reply-webhook retry schedule (e.g. `0.001` in tests)."
  }),
  concurrency: Env.integer("HERALD_WEBHOOK_CONCURRENCY", {
    default: 32,
    min: 1,
    description: "Reply-webhook deliveries in flight at once on this node."
  })
}

export const webhookConfig: Config.Config<WebhookConfigShape> = Env.configOf(webhookVariables).pipe(Config.map((c) => ({
  allowPrivateNetwork: c.allowPrivateNetwork,
  retryTimeScale: c.retryTimeScale > 0 ? c.retryTimeScale : 1,
  attemptTimeout: Duration.seconds(10),
  concurrency: c.concurrency,
  pollInterval: Duration.millis(500)
})))

export class WebhookConfig extends Context.Service<WebhookConfig, WebhookConfigShape>()("herald/WebhookConfig") {
  static readonly layer = Layer.effect(WebhookConfig, webhookConfig)
}
