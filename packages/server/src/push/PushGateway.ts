/**
 * The one door to people's phones and browsers. `send` routes a push to the
 * provider of the device's platform (iOS → APNs, Android → FCM, or the sandbox
 * provider when that platform has no credentials; a browser → Web Push, which
 * needs none), records metrics, and when the provider
 * says the device token is dead marks the device inactive. `sendWithRetry`
 * retries transient failures with capped exponential backoff and jitter,
 * waiting at least as long as the provider's `Retry-After`.
 */
import { Context, Duration, Effect, Layer, Metric, Option, Random, Schedule } from "effect"
import type { Scope } from "effect"
import { AppConfig } from "../config/AppConfig.ts"
import { PushConfig } from "../config/PushConfig.ts"
import type { PushConfigShape } from "../config/PushConfig.ts"
import { WebhookConfig } from "../config/WebhookConfig.ts"
import { GatewayRepo } from "./GatewayRepo.ts"
import type { FcmProviderOptions } from "./FcmProvider.ts"
import { outcomeLabel } from "./PushMessage.ts"
import type { Provider, PushMessage, PushOutcome, PushTarget } from "./PushMessage.ts"
import { makeSandboxProvider } from "./SandboxProvider.ts"
import { SandboxRepo } from "./SandboxRepo.ts"
import { WebPushKeys } from "./WebPushKeys.ts"
import { makeWebPushProvider, vapidSubject } from "./WebPushProvider.ts"
import type { WebPushSettings } from "./WebPushProvider.ts"

export interface PushGatewayShape {
  /** The providers in use, described: e.g. `["apns (api.push.apple.com)", "sandbox (android)"]`. */
  readonly providers: ReadonlyArray<string>
  /** One attempt. Never fails: transport failures are `Retry` outcomes. */
  readonly send: (target: PushTarget, message: PushMessage) => Effect.Effect<PushOutcome>
  /** Up to `maxAttempts` (default 5) attempts while the outcome is `Retry`; answers the last outcome. */
  readonly sendWithRetry: (
    target: PushTarget,
    message: PushMessage,
    options?: { readonly maxAttempts?: number }
  ) => Effect.Effect<PushOutcome>
}

/** Which provider serves each platform. */
export interface PushRoutes {
  readonly ios: Provider
  readonly android: Provider
  readonly web: Provider
}

export const retryPolicy = {
  base: Duration.millis(200),
  factor: 2,
  cap: Duration.seconds(30),
  jitter: 0.2,
  maxAttempts: 5
} as const

/**
 * The wait after failed attempt number `attempt` (1 = the first attempt):
 * `min(cap, base · factor^(attempt−1))`, scaled by a jitter factor in
 * [1 − jitter, 1 + jitter) drawn from `random` ∈ [0, 1), and never shorter
 * than the provider's `Retry-After`.
 */
export const backoffDelay = (
  attempt: number,
  retryAfter: Option.Option<Duration.Duration>,
  random: number
): Duration.Duration => {
  const exponent = Math.max(0, Math.floor(attempt) - 1)
  const baseMillis = Math.min(
    Duration.toMillis(retryPolicy.cap),
    Duration.toMillis(retryPolicy.base) * retryPolicy.factor ** exponent
  )
  const r = Math.min(Math.max(random, 0), 1)
  const jittered = Duration.millis(Math.round(baseMillis * (1 - retryPolicy.jitter + 2 * retryPolicy.jitter * r)))
  return Option.match(retryAfter, {
    onNone: () => jittered,
    onSome: (floor) => Duration.max(jittered, floor)
  })
}

export const sendsTotal = Metric.counter("herald_push_sends_total", {
  description: "Push attempts by provider and outcome (accepted, rejected, retry).",
  incremental: true
})

const durationBoundaries = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

export const sendDuration = Metric.histogram("herald_push_send_duration_seconds", {
  description: "Duration of one push attempt, by provider.",
  boundaries: durationBoundaries
})

// Series built once per (provider, outcome) with fixed attributes: deriving them
// on every update (`Metric.withAttributes`) costs more than the update.
const sendSeries = new Map<string, Metric.Metric<number, unknown>>()
const seriesOf = (key: string, make: () => Metric.Metric<number, unknown>) => {
  let metric = sendSeries.get(key)
  if (metric === undefined) {
    metric = make()
    sendSeries.set(key, metric)
  }
  return metric
}
const durationOf = (provider: string) =>
  seriesOf(`d ${provider}`, () =>
    Metric.histogram("herald_push_send_duration_seconds", {
      description: "Duration of one push attempt, by provider.",
      boundaries: durationBoundaries,
      attributes: { provider }
    }))
const countOf = (provider: string, outcome: string) =>
  seriesOf(`c ${provider} ${outcome}`, () =>
    Metric.counter("herald_push_sends_total", {
      description: "Push attempts by provider and outcome (accepted, rejected, retry).",
      incremental: true,
      attributes: { provider, outcome }
    }))

/** `apns (api.push.apple.com), fcm (project p), webpush (browsers)`; a provider serving several platforms appears once. */
export const describeRoutes = (routes: PushRoutes): ReadonlyArray<string> =>
  [...new Set([routes.ios, routes.android, routes.web])].map((p) => `${p.name} (${p.description})`)

/**
 * Whether a dead-token answer means the device itself is gone. An iOS live
 * activity push goes to the activity's own token (update or push-to-start):
 * that token dying ends the activity, not the device. Android and browser
 * pushes always use the device's own token (a browser's: its subscription).
 */
const deadTokenIsDevice = (target: PushTarget, message: PushMessage) =>
  target.platform !== "ios" || message.pushType !== "liveactivity"

/**
 * The waits of `sendWithRetry`: after the `attempt`-th outcome (`Retry`, or
 * the repetition stops), `backoffDelay` of that attempt and its `Retry-After`.
 */
const retrySchedule = Schedule.forever.pipe(
  Schedule.setInputType<PushOutcome>(),
  Schedule.modifyDelay(({ attempt, input }) =>
    Effect.map(Random.next, (random) =>
      backoffDelay(attempt, input._tag === "Retry" ? input.retryAfter : Option.none(), random)))
)

export const makePushGateway = (routes: PushRoutes): Effect.Effect<PushGatewayShape, never, GatewayRepo> =>
  Effect.gen(function*() {
    const repo = yield* GatewayRepo

    const markInactiveSpan = Effect.withSpan("PushGateway.markInactive")
    const markInactive = (target: PushTarget) =>
      repo.deactivate(target.deviceId, target.token).pipe(
        Effect.catch((error) => Effect.logWarning(`could not mark device ${target.deviceId} inactive`, error)),
        markInactiveSpan
      )

    // Every push passes here: no span of its own (the APNs and FCM calls have
    // theirs, with the device and push type), and no stack trace captured per
    // call as `Effect.fn(name)` does. Its metrics and log lines stay.
    const send = Effect.fnUntraced(function*(target: PushTarget, message: PushMessage) {
      const provider = routes[target.platform]
      const [elapsed, outcome] = yield* Effect.timed(provider.send(target, message))
      yield* Metric.update(durationOf(provider.name), Duration.toMillis(elapsed) / 1000)
      yield* Metric.update(countOf(provider.name, outcomeLabel(outcome)), 1)
      if (outcome._tag === "Rejected") {
        yield* Effect.logInfo(`push to device ${target.deviceId} rejected by ${provider.name}: ${outcome.reason}`)
        if (outcome.tokenInvalid && deadTokenIsDevice(target, message)) yield* markInactive(target)
      } else if (outcome._tag === "Retry") {
        yield* Effect.logDebug(`push to device ${target.deviceId} failed for now at ${provider.name}: ${outcome.reason}`)
      }
      return outcome
    })

    const sendWithRetry = Effect.fnUntraced(function*(
      target: PushTarget,
      message: PushMessage,
      options?: { readonly maxAttempts?: number }
    ) {
      const maxAttempts = Math.max(1, Math.floor(options?.maxAttempts ?? retryPolicy.maxAttempts))
      // `send` never fails: a transient failure is a `Retry` outcome, so this repeats (not retries) while it is one.
      return yield* send(target, message).pipe(
        Effect.repeat({ schedule: retrySchedule, while: (outcome) => outcome._tag === "Retry", times: maxAttempts - 1 })
      )
    })

    return { providers: describeRoutes(routes), send, sendWithRetry }
  })

/**
 * The providers the configuration calls for: APNs and FCM where their
 * credentials are set, the sandbox for the rest, and Web Push for browsers
 * always (its keys are the service's own). Clients close with the scope.
 * Each provider's module (apns2, firebase-admin: a few hundred modules) is
 * loaded only when its credentials are set, so a start without them skips it.
 */
export const providersFromConfig = (
  config: PushConfigShape,
  webPush: WebPushSettings,
  options?: { readonly fcm?: FcmProviderOptions }
): Effect.Effect<PushRoutes, never, Scope.Scope | SandboxRepo | WebPushKeys> =>
  Effect.gen(function*() {
    const web = yield* makeWebPushProvider(webPush)
    const apns = yield* Option.match(config.apns, {
      onNone: () => Effect.succeed(undefined),
      onSome: (apns) =>
        Effect.flatMap(Effect.promise(() => import("./ApnsProvider.ts")), (m) => m.makeApnsProvider(apns, config.timeout))
    })
    const fcm = yield* Option.match(config.fcm, {
      onNone: () => Effect.succeed(undefined),
      onSome: (fcm) =>
        Effect.flatMap(Effect.promise(() => import("./FcmProvider.ts")), (m) => m.makeFcmProvider(fcm, config.timeout, options?.fcm))
    })
    if (apns !== undefined && fcm !== undefined) return { ios: apns, android: fcm, web }
    const sandbox = yield* makeSandboxProvider([
      ...(apns === undefined ? ["ios" as const] : []),
      ...(fcm === undefined ? ["android" as const] : [])
    ])
    return { ios: apns ?? sandbox, android: fcm ?? sandbox, web }
  })

const fromConfig = (options?: { readonly fcm?: FcmProviderOptions }) =>
  Effect.gen(function*() {
    const config = yield* PushConfig
    const app = yield* AppConfig
    const webhooks = yield* WebhookConfig
    const routes = yield* providersFromConfig(config, {
      subject: vapidSubject(Option.getOrUndefined(config.webPushSubject), app.publicUrl),
      allowPrivateNetwork: webhooks.allowPrivateNetwork,
      timeout: config.timeout
    }, options)
    const gateway = yield* makePushGateway(routes)
    // Debug: `herald serve` names the providers in its one start-up line.
    yield* Effect.logDebug(`push providers: ${gateway.providers.join(", ")}`)
    return gateway
  })

export class PushGateway extends Context.Service<PushGateway, PushGatewayShape>()("herald/PushGateway") {
  /** From `PushConfig`; needs `PushConfig`, `AppConfig`, `WebhookConfig`, `SandboxRepo`, `WebPushKeys` and `GatewayRepo`. */
  static readonly layerNoDeps = Layer.effect(PushGateway, fromConfig())

  /** From the environment; needs `SqlClient`. */
  static readonly layer = PushGateway.layerNoDeps.pipe(
    Layer.provide([PushConfig.layer, AppConfig.layer, WebhookConfig.layer, SandboxRepo.layer, WebPushKeys.layer, GatewayRepo.layer])
  )

  /** With given providers (tests; browsers go to the Android route's provider unless one is given); needs `SqlClient`. */
  static readonly layerFromRoutes = (routes: Omit<PushRoutes, "web"> & { readonly web?: Provider }) =>
    Layer.effect(PushGateway, makePushGateway({ ...routes, web: routes.web ?? routes.android })).pipe(
      Layer.provide(GatewayRepo.layer)
    )
}
