/**
 * What a browser's service worker receives: the JSON payload of a Web Push
 * message (docs/architecture.md, "The person's side"), built from the same
 * `PushMessage` the phones get, so every capability that pushes reaches
 * browsers without knowing they exist. An alert shows a notification (with a
 * prompt's kind, so the worker can offer its answers), a withdraw command
 * closes the notification with that tag, a live activity update is a card
 * shown under the activity's tag. Also the request options of each push:
 * urgency, time to live and topic.
 */
import { createHash } from "node:crypto"
import type { PushMessage } from "./PushMessage.ts"

/**
 * The payload's bound. A push service takes 4,096 bytes of encrypted record
 * (RFC 8030 §7.2); `aes128gcm` adds 103 of them (RFC 8291 header, padding
 * delimiter, tag), and a margin keeps every service's own counting happy.
 */
export const WEB_PUSH_PAYLOAD_LIMIT = 3000

/** How long a push service keeps a message for a browser that is offline, unless the message says otherwise. */
export const DEFAULT_TTL_SECONDS = 24 * 60 * 60

export interface WebPushAlert {
  readonly v: 1
  readonly type: "alert"
  readonly tag: string
  readonly title: string
  readonly body: string
  readonly url: string | null
  readonly ref: string
  readonly priority: "high" | "normal"
  readonly interaction: { readonly id: string; readonly kind: string } | null
  readonly data: Readonly<Record<string, string>>
}

export interface WebPushClose {
  readonly v: 1
  readonly type: "close"
  readonly tag: string
}

export interface WebPushCard {
  readonly v: 1
  readonly type: "card"
  readonly tag: string
  readonly title: string
  readonly body: string
  readonly data: Readonly<Record<string, string>>
}

export type WebPushPayload = WebPushAlert | WebPushClose | WebPushCard

/** The request options of one push (RFC 8030 §5.2–5.4). */
export interface WebPushOptions {
  readonly urgency: "high" | "normal"
  readonly ttlSeconds: number
  /** At most 32 base64url characters: a newer push with the same topic replaces an undelivered older one. */
  readonly topic: string
}

export const payloadBytes = (payload: WebPushPayload): number => Buffer.byteLength(JSON.stringify(payload))

const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" })

/** The longest prefix of `text` within `bytes` UTF-8 bytes (JSON escapes counted), cut between characters, with "…". */
const clip = (text: string, bytes: number): string => {
  let out = ""
  let used = 3
  for (const { segment } of graphemes.segment(text)) {
    used += Buffer.byteLength(JSON.stringify(segment)) - 2
    if (used > bytes) return `${out}…`
    out += segment
  }
  return out
}

const stringField = (record: Readonly<Record<string, unknown>>, key: string): string | undefined => {
  const value = record[key]
  return typeof value === "string" && value !== "" ? value : undefined
}

/** The fields an alert carries in its own keys rather than in `data`. */
const promoted = new Set(["ref", "url", "interactionId", "kind"])

const alertOf = (message: PushMessage): WebPushAlert => {
  const data = message.fcm.data ?? {}
  const interactionId = stringField(data, "interactionId")
  const kind = stringField(data, "kind")
  const ref = stringField(data, "ref") ?? ""
  return {
    v: 1,
    type: "alert",
    tag: message.collapseId ?? message.fcm.android?.collapseKey ?? ref,
    title: message.fcm.notification?.title ?? "",
    body: message.fcm.notification?.body ?? "",
    url: stringField(data, "url") ?? null,
    ref,
    priority: message.priority === 10 ? "high" : "normal",
    interaction: interactionId !== undefined && kind !== undefined ? { id: interactionId, kind } : null,
    data: Object.fromEntries(Object.entries(data).filter(([key]) => !promoted.has(key)))
  }
}

const parseState = (text: string | undefined): Readonly<Record<string, unknown>> => {
  if (text === undefined) return {}
  try {
    const value: unknown = JSON.parse(text)
    return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {}
  } catch {
    return {}
  }
}

/** The card fields a service worker draws or acts on, as strings (a prompt card's answers among them). */
const cardDataKeys = ["layout", "status", "interactionId", "kind", "actionDigest", "primaryLabel", "secondaryLabel", "accent", "icon"]

const cardOf = (message: PushMessage): WebPushCard => {
  const fcm = message.fcm.data ?? {}
  const state = parseState(fcm.state)
  const activityId = fcm.activityId ?? message.collapseId ?? ""
  const progress = typeof state.progress === "number" && Number.isFinite(state.progress)
    ? `${Math.round(Math.min(Math.max(state.progress, 0), 1) * 100)}%`
    : undefined
  const lines = [stringField(state, "subtitle"), stringField(state, "status"), stringField(state, "detail"), progress]
  const data: Record<string, string> = { activityId, event: fcm.event ?? "update" }
  for (const key of cardDataKeys) {
    const value = stringField(state, key)
    if (value !== undefined) data[key] = value
  }
  if (progress !== undefined) data.progress = String(state.progress)
  if (fcm.timestamp !== undefined) data.timestamp = fcm.timestamp
  return {
    v: 1,
    type: "card",
    tag: activityId,
    title: stringField(state, "title") ?? "Live activity",
    body: lines.filter((line) => line !== undefined).join(" · "),
    data
  }
}

/**
 * Within `WEB_PUSH_PAYLOAD_LIMIT`: the inbox item keeps everything, so a
 * payload that would not fit first loses its image, then its link, then the
 * end of its body, then of its title, then its other data.
 */
const fit = (payload: WebPushAlert | WebPushCard): WebPushPayload | undefined => {
  let current: WebPushAlert | WebPushCard = payload
  const over = () => payloadBytes(current) - WEB_PUSH_PAYLOAD_LIMIT
  if (over() <= 0) return current
  if (current.data.imageUrl !== undefined) {
    const { imageUrl: _, ...data } = current.data
    current = { ...current, data }
  }
  if (over() > 0 && current.type === "alert" && current.url !== null) current = { ...current, url: null }
  if (over() > 0) current = { ...current, body: clip(current.body, Math.max(0, Buffer.byteLength(current.body) - over())) }
  if (over() > 0) current = { ...current, title: clip(current.title, Math.max(0, Buffer.byteLength(current.title) - over())) }
  if (over() > 0) current = { ...current, data: {} }
  return over() <= 0 ? current : undefined
}

/**
 * The payload for a browser, or undefined when the message has none (a silent
 * push other than a withdraw: a browser has no background work to wake) or
 * cannot fit (its fixed fields alone would pass the bound).
 */
export const webPushPayload = (message: PushMessage): WebPushPayload | undefined => {
  switch (message.pushType) {
    case "alert":
      return fit(alertOf(message))
    case "liveactivity":
      return fit(cardOf(message))
    case "background": {
      const withdraw = message.fcm.data?.withdraw
      if (withdraw === undefined) return undefined
      const close: WebPushClose = { v: 1, type: "close", tag: withdraw }
      return payloadBytes(close) <= WEB_PUSH_PAYLOAD_LIMIT ? close : undefined
    }
  }
}

/** A short, fixed-length name for a tag that a push service accepts as a `Topic` (base64url, ≤ 32 characters). */
export const topicOf = (tag: string): string => createHash("sha256").update(tag).digest("base64url").slice(0, 32)

/**
 * Urgency and time to live from the message: priority 10 is delivered now
 * (`high`), 5 may wait for the device (`normal`; never `low`, which a push
 * service may hold until the device is charging: a close command must arrive
 * while its notification is still shown). A message's own expiration (unix
 * seconds) bounds its life; without one it lives a day, like the alert it
 * closes. The topic follows the tag, so an alert, its close and each card
 * update replace one another while the browser is offline.
 */
export const webPushOptions = (message: PushMessage, payload: WebPushPayload, nowSeconds: number): WebPushOptions => ({
  urgency: message.priority === 10 ? "high" : "normal",
  ttlSeconds: message.expiration === undefined
    ? DEFAULT_TTL_SECONDS
    : message.expiration === 0
    ? 0
    : Math.max(0, Math.min(DEFAULT_TTL_SECONDS * 28, Math.floor(message.expiration - nowSeconds))),
  topic: topicOf(payload.tag)
})
