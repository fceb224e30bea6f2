/**
 * APNs through `apns2`: HTTP/2 to Apple with a JWT bearer token (ES256, signed
 * with the team's .p8 key, renewed by apns2 every 55 minutes).
 *
 * Two things apns2 12 does not give, filled in here:
 * - the response headers (`apns-id`, the provider's id of an accepted push, and
 *   `Retry-After`): read by wrapping the `request` of the client's undici pool,
 *   which `ApnsClient.send` calls synchronously, so each send captures the
 *   headers of its own response;
 * - its `requestTimeout` option is declared but unused: the timeout is
 *   `Effect.timeoutOrElse` around the send.
 */
import { ApnsClient, ApnsError, Notification } from "apns2"
import { Clock, Duration, Effect, Option, Redacted } from "effect"
import type { Scope } from "effect"
import type { ApnsConfig } from "../config/PushConfig.ts"
import { Accepted, parseRetryAfter, Rejected, Retry } from "./PushMessage.ts"
import type { Provider, PushMessage, PushOutcome, PushTarget } from "./PushMessage.ts"

type ResponseHeaders = Record<string, string | ReadonlyArray<string> | undefined>

interface Capture {
  headers?: ResponseHeaders
}

type Attempt =
  | { readonly _tag: "Answered" }
  | { readonly _tag: "Failed"; readonly error: unknown }
  | { readonly _tag: "TimedOut" }

interface CapturingClient {
  readonly client: ApnsClient
  /** Sends; resolves when APNs accepted, rejects with apns2's error; `capture` receives the response headers. */
  readonly send: (notification: Notification, capture: Capture) => Promise<void>
}

const makeClient = (config: ApnsConfig, host: string): CapturingClient => {
  const client = new ApnsClient({
    team: config.teamId,
    keyId: config.keyId,
    signingKey: Redacted.value(config.key),
    defaultTopic: config.topic,
    host
  })
  let slot: Capture | undefined
  const pool = client.client as unknown as { request: (options: unknown) => Promise<{ headers: ResponseHeaders }> }
  const request = pool.request.bind(pool)
  pool.request = (options) => {
    const capture = slot
    slot = undefined
    return request(options).then((response) => {
      if (capture !== undefined) capture.headers = response.headers
      return response
    })
  }
  return {
    client,
    send: (notification, capture) => {
      slot = capture
      try {
        return client.send(notification).then(() => undefined)
      } finally {
        slot = undefined
      }
    }
  }
}

const header = (headers: ResponseHeaders | undefined, name: string): string | undefined => {
  const value = headers?.[name]
  return typeof value === "string" ? value : Array.isArray(value) ? value[0] : undefined
}

/**
 * Reasons that say the device token itself is dead: the device is marked
 * inactive. (`DeviceTokenNotForTopic` is left out on purpose: a wrong
 * `APNS_TOPIC` would answer it for every device.)
 */
const deadTokenReasons = new Set(["BadDeviceToken", "Unregistered", "ExpiredToken"])
/** Refusals that a later attempt can overcome. */
const transientReasons = new Set([
  "TooManyRequests",
  "TooManyProviderTokenUpdates",
  "ExpiredProviderToken",
  "InternalServerError",
  "ServiceUnavailable",
  "Shutdown",
  "IdleTimeout"
])

/** Classifies an APNs answer (status + `{reason}`) into an outcome. */
export const classifyApnsError = (
  status: number,
  reason: string,
  retryAfter: Option.Option<Duration.Duration>
): PushOutcome => {
  if (deadTokenReasons.has(reason) || status === 410) return Rejected(reason, { tokenInvalid: true })
  if (transientReasons.has(reason) || status === 429 || status >= 500) return Retry(reason, retryAfter)
  // Any other 4xx is about this push or our credentials (payload, topic, key), not the device.
  if (status >= 400) return Rejected(reason)
  return Retry(reason, retryAfter)
}

const transportReason = (error: unknown): string => {
  const code = typeof error === "object" && error !== null ? (error as { code?: unknown }).code : undefined
  return typeof code === "string" ? `ConnectionError ${code}` : "ConnectionError"
}

export const toNotification = (config: Pick<ApnsConfig, "topic">, target: PushTarget, message: PushMessage) => {
  const { aps, ...rest } = message.apns
  return new Notification(target.token, {
    type: message.pushType,
    priority: message.priority,
    // Live activity pushes go to `<bundle id>.push-type.liveactivity`; a message may name another suffix.
    topic: config.topic + (message.topicSuffix ?? (message.pushType === "liveactivity" ? ".push-type.liveactivity" : "")),
    // apns2 writes into `aps`; hand it a copy.
    aps: typeof aps === "object" && aps !== null ? { ...(aps as Record<string, unknown>) } : {},
    data: rest,
    ...(message.collapseId !== undefined ? { collapseId: message.collapseId } : {}),
    ...(message.expiration !== undefined ? { expiration: message.expiration } : {})
  })
}

/** Closes gracefully, letting in-flight pushes finish for a second, then drops what is left. */
const closeClient = (c: CapturingClient) =>
  Effect.tryPromise(() => c.client.close()).pipe(
    Effect.timeoutOption("1 second"),
    Effect.flatMap(Option.match({
      onNone: () => Effect.tryPromise(() => c.client.destroy()),
      onSome: () => Effect.void
    })),
    Effect.ignore
  )

/**
 * The APNs provider: one HTTP/2 client per host (production, and sandbox when
 * configured), closed with the scope.
 */
export const makeApnsProvider = (config: ApnsConfig, timeout: Duration.Duration): Effect.Effect<Provider, never, Scope.Scope> =>
  Effect.gen(function*() {
    const production = yield* Effect.acquireRelease(Effect.sync(() => makeClient(config, config.host)), closeClient)
    const sandbox = yield* Option.match(config.sandboxHost, {
      onNone: () => Effect.succeed(Option.none<CapturingClient>()),
      onSome: (host) =>
        Effect.acquireRelease(Effect.sync(() => makeClient(config, host)), closeClient).pipe(Effect.map(Option.some))
    })

    // The provider call keeps its span (built once: no stack trace captured per call).
    const send = Effect.fnUntraced(function*(target: PushTarget, message: PushMessage) {
      const client = target.environment === "sandbox" ? Option.getOrElse(sandbox, () => production) : production
      const capture: Capture = {}
      const attempt = yield* Effect.tryPromise({
        try: () => client.send(toNotification(config, target, message), capture),
        catch: (error) => error
      }).pipe(
        Effect.as<Attempt>({ _tag: "Answered" }),
        Effect.catch((error) => Effect.succeed<Attempt>({ _tag: "Failed", error })),
        Effect.timeoutOrElse({ duration: timeout, orElse: () => Effect.succeed<Attempt>({ _tag: "TimedOut" }) })
      )
      switch (attempt._tag) {
        case "Answered": {
          const apnsId = header(capture.headers, "apns-id")
          // Apple always answers with an apns-id; the fallback only guards a proxy that drops it.
          return Accepted(apnsId ?? `apns-unknown-${yield* Clock.currentTimeMillis}`)
        }
        case "TimedOut":
          return Retry("Timeout")
        case "Failed": {
          if (attempt.error instanceof ApnsError) {
            const retryAfter = parseRetryAfter(header(capture.headers, "retry-after"), yield* Clock.currentTimeMillis)
            return classifyApnsError(attempt.error.statusCode, String(attempt.error.reason), retryAfter)
          }
          return Retry(transportReason(attempt.error))
        }
      }
    }, Effect.withSpan("ApnsProvider.send", (target: PushTarget, message: PushMessage) => ({
      attributes: { deviceId: target.deviceId, pushType: message.pushType }
    })))

    const hosts = Option.match(config.sandboxHost, {
      onNone: () => config.host,
      onSome: (host) => `${config.host}, sandbox ${host}`
    })
    return { name: "apns", description: hosts, send } satisfies Provider
  })
