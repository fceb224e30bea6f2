/**
 * Web Push (RFC 8030) to browsers, through the kept library `web-push`: it
 * signs the request with the service's VAPID key (RFC 8292, ES256 JWT in
 * `Authorization: vapid t=…, k=…`) and encrypts the payload to the browser's
 * keys with `aes128gcm` (RFC 8291). The request itself is not sent by the
 * library: a subscription's endpoint is a URL the browser (so the user)
 * supplied, so it goes out under Herald's outbound address rules
 * (webhooks/Outbound.ts: global unicast https only, the connection pinned to
 * the address that was checked; loopback and plain http only with
 * `HERALD_ALLOW_PRIVATE_NETWORK_TARGETS`).
 *
 * Answers: 201/202 accepted (the push service's `Location` names the
 * message); 404/410 the subscription is gone (the device is marked inactive,
 * as APNs `Unregistered`); 429 and 5xx failed for now (`Retry-After`
 * honoured by the retries); any other 4xx refuses this push for good without
 * blaming the device (400 malformed, 401/403 our signature, 413 too large).
 */
import { Clock, Duration, Effect } from "effect"
import type webpush from "web-push"
import { post } from "../webhooks/Outbound.ts"
import type { OutboundPolicy } from "../webhooks/Outbound.ts"
import { Accepted, parseRetryAfter, Rejected, Retry } from "./PushMessage.ts"
import type { Provider, PushMessage, PushOutcome, PushTarget } from "./PushMessage.ts"
import { webPushOptions, webPushPayload } from "./WebPushPayload.ts"
import { WebPushKeys } from "./WebPushKeys.ts"

export interface WebPushSettings {
  /** The VAPID `sub`: a `mailto:` or `https:` contact. */
  readonly subject: string
  readonly allowPrivateNetwork: boolean
  /** One request's bound, connection included. */
  readonly timeout: Duration.Duration
}

/**
 * The VAPID `sub`: the operator's `HERALD_WEBPUSH_SUBJECT`, else the public
 * URL when it is https on a real host (`sub` takes only `mailto:` and `https:`),
 * else a placeholder contact (a local quick start).
 */
export const vapidSubject = (configured: string | undefined, publicUrl: string): string => {
  if (configured !== undefined) return configured
  const url = URL.canParse(publicUrl) ? new URL(publicUrl) : undefined
  return url !== undefined && url.protocol === "https:" && url.hostname !== "localhost" ? url.origin : "mailto:webpush@localhost"
}

const header = (headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>, name: string) => {
  const value = headers[name]
  return typeof value === "string" ? value : Array.isArray(value) ? value[0] as string | undefined : undefined
}

/** Classifies a push service's answer (RFC 8030 §5, RFC 8292 §4.2). */
export const classifyWebPushAnswer = (
  status: number,
  headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>,
  nowMillis: number
): PushOutcome => {
  if (status >= 200 && status < 300) return Accepted(header(headers, "location") ?? `webpush-${status}-${nowMillis}`)
  if (status === 404 || status === 410) return Rejected(status === 410 ? "Gone" : "NotFound", { tokenInvalid: true })
  if (status === 429 || status >= 500) {
    return Retry(status === 429 ? "TooManyRequests" : `HTTP ${status}`, parseRetryAfter(header(headers, "retry-after"), nowMillis))
  }
  const reasons: Record<number, string> = { 400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 413: "PayloadTooLarge" }
  return Rejected(reasons[status] ?? `HTTP ${status}`)
}

/** The library, loaded at the first push to a browser rather than at every start. */
let loaded: Promise<typeof webpush> | undefined
const library = Effect.promise(() => (loaded ??= import("web-push").then((m) => m.default)))

/**
 * Signs and encrypts one push with web-push; fails with the library's reason
 * (a subscription whose keys cannot be used).
 */
const requestDetails = (
  target: PushTarget & { readonly webPush: NonNullable<PushTarget["webPush"]> },
  body: string,
  options: webpush.RequestOptions
) =>
  Effect.flatMap(library, (lib) =>
    Effect.try({
      try: () => lib.generateRequestDetails({ endpoint: target.token, keys: target.webPush }, body, options),
      catch: (error) => (error instanceof Error ? error.message : String(error))
    }))

export const makeWebPushProvider = (settings: WebPushSettings): Effect.Effect<Provider, never, WebPushKeys> =>
  Effect.gen(function*() {
    const keys = yield* WebPushKeys
    // Push services do not redirect; one that does is not followed (a failure retried later).
    const policy: OutboundPolicy = { allowPrivateNetwork: settings.allowPrivateNetwork, timeout: settings.timeout, maxRedirects: 0 }

    const send = Effect.fnUntraced(function*(target: PushTarget, message: PushMessage) {
      const webPush = target.webPush
      if (webPush === undefined) return Rejected("NoSubscriptionKeys")
      const payload = webPushPayload(message)
      if (payload === undefined) return Rejected(message.pushType === "background" ? "NotForBrowsers" : "PayloadTooLarge")
      const options = webPushOptions(message, payload, Math.floor((yield* Clock.currentTimeMillis) / 1000))
      const key = yield* keys.current
      const details = yield* Effect.result(requestDetails({ ...target, webPush }, JSON.stringify(payload), {
        vapidDetails: { subject: settings.subject, publicKey: key.publicKey, privateKey: key.privateKey },
        contentEncoding: "aes128gcm",
        TTL: options.ttlSeconds,
        urgency: options.urgency,
        topic: options.topic
      }))
      if (details._tag === "Failure") return Rejected(`EncryptionFailed: ${details.failure}`)
      const headers: Record<string, string> = { "user-agent": "Herald-WebPush/1.0" }
      for (const [name, value] of Object.entries(details.success.headers)) {
        // The outbound request counts the body itself.
        if (name.toLowerCase() !== "content-length") headers[name.toLowerCase()] = String(value)
      }
      const result = yield* post(policy, { url: target.token, headers, body: details.success.body ?? new Uint8Array() })
      switch (result._tag) {
        case "Answered":
          return classifyWebPushAnswer(result.status, result.headers, yield* Clock.currentTimeMillis)
        // The rules forbid the endpoint: nothing was sent, and nothing will be while they do.
        case "Refused":
          return Rejected(`AddressRefused: ${result.reason}`)
        case "Failed":
          return Retry(result.reason)
      }
    }, Effect.withSpan("WebPushProvider.send", (target: PushTarget, message: PushMessage) => ({
      attributes: { deviceId: target.deviceId, pushType: message.pushType }
    })))

    return { name: "webpush", description: "browsers", send } satisfies Provider
  })
