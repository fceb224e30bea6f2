/**
 * What the push gateway sends and what it answers: plain data shared by every
 * provider. A message carries both wire forms (the APNs JSON payload and the
 * FCM fields) and the gateway picks the one the device's platform uses; a
 * browser's Web Push payload is built from them (WebPushPayload.ts).
 */
import { Data, Duration, Option, Schema } from "effect"
import type { Effect } from "effect"

/** A browser's Web Push keys (RFC 8291), base64url as `PushSubscription.toJSON()` gives them. */
export interface WebPushKeys {
  readonly p256dh: string
  readonly auth: string
}

/** A device as the gateway needs it: where to push and how. */
export interface PushTarget {
  readonly deviceId: string
  readonly platform: "ios" | "android" | "web"
  /** The provider's device token; for `web`, the push service endpoint (a URL). */
  readonly token: string
  /** APNs environment of the token; picks the sandbox host when one is configured. */
  readonly environment?: "sandbox" | "production"
  /** `web` only: the keys the payload is encrypted to. */
  readonly webPush?: WebPushKeys
}

export type PushType = "alert" | "background" | "liveactivity"

export interface FcmNotification {
  readonly title: string
  readonly body: string
}

export interface FcmAndroidOptions {
  readonly priority: "high" | "normal"
  readonly collapseKey?: string
  readonly ttlSeconds?: number
  /** The notification's own priority on the device (`low`: no sound or heads-up; quiet hours' silent alerts). */
  readonly notificationPriority?: "low"
}

export interface PushMessage {
  readonly pushType: PushType
  /** `apns-priority`: 10 delivers now, 5 lets the device batch (required for background pushes). */
  readonly priority: 5 | 10
  /** `apns-collapse-id`: a later push with the same id replaces the earlier one. */
  readonly collapseId?: string
  /** `apns-expiration`, unix seconds; 0 means "deliver once or drop". */
  readonly expiration?: number
  /** Appended to the APNs topic (bundle id), e.g. `.push-type.liveactivity`. */
  readonly topicSuffix?: string
  /** The full APNs JSON payload, including `aps`. */
  readonly apns: Readonly<Record<string, unknown>>
  readonly fcm: {
    readonly notification?: FcmNotification
    readonly data?: Readonly<Record<string, string>>
    readonly android?: FcmAndroidOptions
  }
}

/**
 * A message as a queue stores it (jsonb) and reads it back: every field a
 * provider reads, so what is claimed is decoded, never cast.
 */
export const StoredPushMessage: Schema.Codec<PushMessage> = Schema.Struct({
  pushType: Schema.Literals(["alert", "background", "liveactivity"]),
  priority: Schema.Literals([5, 10]),
  collapseId: Schema.optionalKey(Schema.String),
  expiration: Schema.optionalKey(Schema.Number),
  topicSuffix: Schema.optionalKey(Schema.String),
  apns: Schema.Record(Schema.String, Schema.Unknown),
  fcm: Schema.Struct({
    notification: Schema.optionalKey(Schema.Struct({ title: Schema.String, body: Schema.String })),
    data: Schema.optionalKey(Schema.Record(Schema.String, Schema.String)),
    android: Schema.optionalKey(Schema.Struct({
      priority: Schema.Literals(["high", "normal"]),
      collapseKey: Schema.optionalKey(Schema.String),
      ttlSeconds: Schema.optionalKey(Schema.Number),
      notificationPriority: Schema.optionalKey(Schema.Literal("low"))
    }))
  })
})

/** APNs and FCM both refuse, for good, a payload over 4 KB. */
export const PAYLOAD_LIMIT = 4096

/** The bytes APNs counts: its JSON payload. */
export const apnsBytes = (message: PushMessage): number => Buffer.byteLength(JSON.stringify(message.apns))

/**
 * The bytes FCM is taken to count: the notification and the data as JSON. FCM
 * documents 4 KB without saying how it counts (its keys and values and some
 * overhead per key, by outside measurements): the JSON, escapes and all, is
 * on the safe side of it, so nothing within it is refused.
 */
export const fcmBytes = (message: PushMessage): number =>
  Buffer.byteLength(JSON.stringify({ notification: message.fcm.notification, data: message.fcm.data }))

/** What the message weighs on the platform that counts more: within `PAYLOAD_LIMIT`, either provider takes it. */
export const payloadBytes = (message: PushMessage): number => Math.max(apnsBytes(message), fcmBytes(message))

/**
 * How a provider answered one push:
 * - `Accepted`: the provider took it; `providerId` is its id (`apns-id`, the FCM message name, `sbx_…`).
 * - `Rejected`: refused for good; retrying the same push cannot succeed. `tokenInvalid` says the
 *   device token itself is dead (APNs BadDeviceToken/Unregistered, FCM UNREGISTERED/INVALID_ARGUMENT):
 *   the gateway then marks the device inactive. A refusal that is not the device's fault (a payload
 *   too large, a topic the key may not use) leaves the device alone.
 * - `Retry`: failed for now (429, 5xx, timeouts, connection errors); `retryAfter` is the provider's
 *   `Retry-After` when it sent one.
 */
export type PushOutcome = Data.TaggedEnum<{
  Accepted: { readonly providerId: string }
  Rejected: { readonly reason: string; readonly tokenInvalid: boolean }
  Retry: { readonly reason: string; readonly retryAfter: Option.Option<Duration.Duration> }
}>

export const PushOutcome = Data.taggedEnum<PushOutcome>()

export const Accepted = (providerId: string): PushOutcome => PushOutcome.Accepted({ providerId })

export const Rejected = (reason: string, options?: { readonly tokenInvalid?: boolean }): PushOutcome =>
  PushOutcome.Rejected({ reason, tokenInvalid: options?.tokenInvalid ?? false })

export const Retry = (reason: string, retryAfter: Option.Option<Duration.Duration> = Option.none()): PushOutcome =>
  PushOutcome.Retry({ reason, retryAfter })

/** The label of an outcome in metrics and logs. */
export const outcomeLabel = (outcome: PushOutcome): "accepted" | "rejected" | "retry" =>
  outcome._tag === "Accepted" ? "accepted" : outcome._tag === "Rejected" ? "rejected" : "retry"

/**
 * Parses a `Retry-After` header: delay seconds or an HTTP date (relative to
 * `nowMillis`). None when absent, malformed or already past.
 */
export const parseRetryAfter = (
  value: string | ReadonlyArray<string> | undefined | null,
  nowMillis: number
): Option.Option<Duration.Duration> => {
  const raw = Array.isArray(value) ? value[0] : value
  if (typeof raw !== "string" || raw.trim() === "") return Option.none()
  const text = raw.trim()
  if (/^\d+$/.test(text)) return Option.some(Duration.seconds(Number(text)))
  const at = Date.parse(text)
  if (Number.isNaN(at) || at <= nowMillis) return Option.none()
  return Option.some(Duration.millis(at - nowMillis))
}

/** The FCM v1 message Herald sends for a message to an Android target (firebase-admin's `TokenMessage`). */
export interface FcmTokenMessage {
  readonly token: string
  readonly notification?: { readonly title: string; readonly body: string }
  readonly data?: { readonly [key: string]: string }
  readonly android?: {
    readonly priority: "high" | "normal"
    readonly collapseKey?: string
    /** Milliseconds, as firebase-admin takes it (sent as `"<seconds>s"`). */
    readonly ttl?: number
    readonly notification?: { readonly priority: "low" }
  }
}

export const toFcmMessage = (target: PushTarget, message: PushMessage): FcmTokenMessage => {
  const { android, data, notification } = message.fcm
  return {
    token: target.token,
    ...(notification !== undefined ? { notification: { title: notification.title, body: notification.body } } : {}),
    ...(data !== undefined ? { data: { ...data } } : {}),
    ...(android !== undefined
      ? {
        android: {
          priority: android.priority,
          ...(android.collapseKey !== undefined ? { collapseKey: android.collapseKey } : {}),
          ...(android.ttlSeconds !== undefined ? { ttl: Math.max(0, Math.round(android.ttlSeconds)) * 1000 } : {}),
          ...(android.notificationPriority !== undefined ? { notification: { priority: android.notificationPriority } } : {})
        }
      }
      : {})
  }
}

/** A push provider: never fails, every transport failure is classified into an outcome. */
export interface Provider {
  readonly name: "apns" | "fcm" | "webpush" | "sandbox"
  /** For the start-up log line, e.g. `api.push.apple.com` or `project my-proj`. */
  readonly description: string
  readonly send: (target: PushTarget, message: PushMessage) => Effect.Effect<PushOutcome>
}
