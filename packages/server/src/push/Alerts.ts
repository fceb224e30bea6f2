/**
 * The push messages of messaging: an alert (a notification or a webhook-service
 * delivery shown in the tray) and the silent command that withdraws it. The
 * alert's collapse id is what the withdraw command names, so the phone app can
 * remove exactly that push from the tray.
 */
import { PAYLOAD_LIMIT, payloadBytes } from "./PushMessage.ts"
import type { PushMessage } from "./PushMessage.ts"

export interface AlertContent {
  /** The inbox id the push opens: `notification:anot_…` or `event:evt_…`. */
  readonly ref: string
  /** The collapse id: the item's own id (`anot_…`, `evt_…`), at most 64 bytes as APNs requires. */
  readonly collapseId: string
  readonly title: string
  /** Plain text shown in the tray (a markdown body is previewed, never sent raw). */
  readonly body: string
  readonly url: string | null
  readonly imageUrl: string | null
  /** Groups the tray by project (`thread-id` on iOS). */
  readonly threadId: string | null
  /** The app's notification category: which action buttons the tray shows (a prompt's answers). */
  readonly category?: string
  /** More string fields for the app (e.g. a prompt's kind and action digest). */
  readonly data?: Record<string, string>
  /**
   * `time-sensitive` (an on-call page): breaks through Focus on iOS
   * (`interruption-level`) and tells the Android app to use its urgent channel.
   */
  readonly interruptionLevel?: "time-sensitive"
}

const optional = (entries: Record<string, string | null>): Record<string, string> =>
  Object.fromEntries(Object.entries(entries).filter((e): e is [string, string] => e[1] !== null))

const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" })

/** The longest prefix of `text` within `bytes` UTF-8 bytes, cut between characters as a person sees them. */
const clip = (text: string, bytes: number) => {
  let out = ""
  let used = 0
  for (const { segment } of graphemes.segment(text)) {
    used += Buffer.byteLength(segment)
    if (used > bytes) break
    out += segment
  }
  return out
}

/**
 * A visible alert, delivered now (priority 10), always within the providers'
 * payload limit: the tray shows a preview and the inbox item (`ref`) keeps
 * everything, so an alert that would not fit first loses its image, then its
 * link, then the end of its body.
 */
export const alertMessage = (alert: AlertContent): PushMessage => {
  const message = buildAlert(alert)
  const over = payloadBytes(message) - PAYLOAD_LIMIT
  if (over <= 0) return message
  if (alert.imageUrl !== null) return alertMessage({ ...alert, imageUrl: null })
  if (alert.url !== null) return alertMessage({ ...alert, url: null })
  // Each byte cut from the text is at least a byte cut from its JSON; "…" is three.
  return buildAlert({ ...alert, body: `${clip(alert.body, Buffer.byteLength(alert.body) - over - 3)}…` })
}

const buildAlert = (alert: AlertContent): PushMessage => {
  const extra = {
    ...optional({ ref: alert.ref, url: alert.url, imageUrl: alert.imageUrl, interruptionLevel: alert.interruptionLevel ?? null }),
    ...alert.data
  }
  return {
    pushType: "alert",
    priority: 10,
    collapseId: alert.collapseId,
    apns: {
      aps: {
        alert: { title: alert.title, body: alert.body },
        sound: "default",
        // Lets the app's notification service extension fetch `imageUrl`.
        ...(alert.imageUrl !== null ? { "mutable-content": 1 } : {}),
        ...(alert.threadId !== null ? { "thread-id": alert.threadId } : {}),
        ...(alert.category !== undefined ? { category: alert.category } : {}),
        ...(alert.interruptionLevel !== undefined ? { "interruption-level": alert.interruptionLevel } : {})
      },
      herald: extra
    },
    fcm: {
      notification: { title: alert.title, body: alert.body },
      data: alert.category !== undefined ? { ...extra, category: alert.category } : extra,
      android: { priority: "high", collapseKey: alert.collapseId }
    }
  }
}

/**
 * An alert made quiet (quiet hours, mode `silent`): shown without sound and
 * at the passive interruption level on iOS (no screen wake, no banner), as a
 * normal-priority FCM message with a low-priority notification on Android;
 * `interruptionLevel: passive` tells the apps (and a browser) the same.
 */
export const quietAlert = (message: PushMessage): PushMessage => {
  const { sound: _sound, ...aps } = (message.apns.aps ?? {}) as Record<string, unknown>
  const herald = (message.apns.herald ?? {}) as Record<string, unknown>
  return {
    ...message,
    apns: { ...message.apns, aps: { ...aps, "interruption-level": "passive" }, herald: { ...herald, interruptionLevel: "passive" } },
    fcm: {
      ...message.fcm,
      data: { ...message.fcm.data, interruptionLevel: "passive" },
      android: { ...message.fcm.android, priority: "normal", notificationPriority: "low" }
    }
  }
}

/**
 * The silent removal command: an APNs background push (priority 5, as Apple
 * requires for `content-available`) and an FCM data message, both naming the
 * collapse id of the alert to remove.
 */
export const withdrawMessage = (collapseId: string): PushMessage => ({
  pushType: "background",
  priority: 5,
  apns: { aps: { "content-available": 1 }, herald: { withdraw: collapseId } },
  fcm: { data: { withdraw: collapseId }, android: { priority: "high" } }
})
