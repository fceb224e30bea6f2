/**
 * What every sender's mapper shares (docs/inbound-webhooks.md): the request as
 * read, its parsed body, what a mapper answers (the notification, its
 * priority and alert identity, the payload kept on the Event), the severity
 * table, and the last step that bounds it all. Pure functions: no I/O here.
 */
import type { AlertPriority, AlertState, InboundFormat } from "@herald/api"
import { createHash } from "node:crypto"
import {
  INBOUND_MAX_ALERT_KEY,
  INBOUND_MAX_BODY,
  INBOUND_MAX_PAYLOAD_BYTES,
  INBOUND_MAX_TITLE
} from "../../config/Limits.ts"

/** A delivery as received: header names lower-case. */
export interface InboundRequest {
  readonly contentType: string | undefined
  readonly headers: Readonly<Record<string, string | undefined>>
  readonly text: string
}

/** The body once parsed: JSON, a form's key=value pairs, or text. */
export type InboundBody =
  | { readonly kind: "json"; readonly value: unknown }
  | { readonly kind: "form"; readonly fields: Readonly<Record<string, string>> }
  | { readonly kind: "text"; readonly text: string }

/** What a mapper reads from a delivery, before `finish` bounds it. */
export interface Draft {
  readonly title: string | null
  readonly body: string
  readonly url?: string | null | undefined
  readonly imageUrl?: string | null | undefined
  readonly priority?: AlertPriority | undefined
  readonly alertKey?: string | null | undefined
  readonly state?: AlertState | null | undefined
}

/** A delivery ready to store and push. */
export interface Mapped {
  readonly format: InboundFormat
  readonly title: string | null
  readonly body: string
  readonly url: string | null
  readonly imageUrl: string | null
  readonly priority: AlertPriority
  readonly alertKey: string | null
  readonly state: AlertState | null
  /** JSON for the Event's `payload` column (already bounded), or null. */
  readonly payload: string | null
}

/** A delivery refused: 400 with issues, or 415. */
export class Refusal {
  readonly _tag = "Refusal"
  readonly status: 400 | 415
  readonly message: string
  readonly issues: ReadonlyArray<{ readonly path: string; readonly message: string }>
  constructor(status: 400 | 415, message: string, issues: ReadonlyArray<{ readonly path: string; readonly message: string }> = []) {
    this.status = status
    this.message = message
    this.issues = issues
  }
}

export const invalid = (path: string, message: string) =>
  new Refusal(400, "The request failed validation.", [{ path, message }])

export const isRecord = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

/** A non-empty string (trimmed) or undefined; numbers count, as senders send ids both ways. */
export const str = (u: unknown): string | undefined => {
  if (typeof u === "number" && Number.isFinite(u)) return String(u)
  if (typeof u !== "string") return undefined
  const t = u.trim()
  return t === "" ? undefined : t
}

/** The first value that is a non-empty string. */
export const first = (...values: ReadonlyArray<unknown>): string | undefined => {
  for (const v of values) {
    const s = str(v)
    if (s !== undefined) return s
  }
  return undefined
}

export const field = (u: unknown, key: string): unknown => isRecord(u) ? u[key] : undefined

/** Lines joined, the empty ones dropped. */
export const lines = (...parts: ReadonlyArray<string | undefined | null>) =>
  parts.filter((p): p is string => p !== undefined && p !== null && p !== "").join("\n")

// The severity table (docs/inbound-webhooks.md), by lower-case word.
const severityWords: ReadonlyArray<readonly [AlertPriority, ReadonlyArray<string>]> = [
  ["critical", ["critical", "crit", "fatal", "emergency", "emerg", "alert", "page", "disaster", "urgent", "max", "p1", "sev1", "5"]],
  ["high", ["high", "error", "err", "major", "warning", "warn", "p2", "sev2", "4"]],
  ["normal", ["normal", "medium", "moderate", "average", "default", "minor", "p3", "sev3", "3"]],
  ["low", ["low", "info", "information", "informational", "notice", "debug", "trace", "ok", "none", "min", "p4", "p5", "sev4", "sev5", "1", "2"]]
]
const severityTable = new Map(severityWords.flatMap(([priority, words]) => words.map((w) => [w, priority] as const)))

/** A sender's severity word (or ntfy's 1–5) as a priority; undefined when the word is not in the table. */
export const priorityOf = (severity: unknown): AlertPriority | undefined => {
  const word = str(severity)?.toLowerCase()
  return word === undefined ? undefined : severityTable.get(word)
}

const stateWords: ReadonlyMap<string, AlertState> = new Map([
  ...["firing", "alerting", "alert", "triggered", "down", "problem", "critical", "warning", "open", "opened", "created", "unresolved", "failed", "failure"]
    .map((w) => [w, "firing"] as const),
  ...["resolved", "ok", "normal", "up", "recovered", "closed", "close", "success", "succeeded", "fixed"].map((w) => [w, "resolved"] as const)
])

/** A status word as firing/resolved; null when it is neither. */
export const stateOf = (word: unknown): AlertState | null => stateWords.get(str(word)?.toLowerCase() ?? "") ?? null

/** `X-Priority`/`Priority` (ntfy's header: 1–5 or a word), when it names a priority. */
export const headerPriority = (request: InboundRequest) =>
  priorityOf(request.headers["x-priority"] ?? request.headers["priority"])

const graphemes = new Intl.Segmenter(undefined, { granularity: "grapheme" })

/** At most `max` characters (UTF-16 units, as the schemas count), cut between graphemes, "…" marking the cut. */
export const clip = (text: string, max: number): string => {
  if (text.length <= max) return text
  let out = ""
  for (const { segment } of graphemes.segment(text)) {
    if (out.length + segment.length > max - 1) break
    out += segment
  }
  return `${out}…`
}

const refusedTapSchemes = new Set(["javascript", "vbscript", "data", "file", "blob", "about"])
const schemeOf = (s: string) => URL.canParse(s) ? new URL(s).protocol.slice(0, -1) : ""

/** A link the phone may open (the rules of `TapUrl`), else null. */
export const tapUrl = (u: unknown): string | null => {
  const s = str(u)
  return s !== undefined && s.length <= 2048 && URL.canParse(s) && !refusedTapSchemes.has(schemeOf(s)) ? s : null
}

/** An http(s) image URL (the rules of `ImageUrl`), else null. */
export const imageUrl = (u: unknown): string | null => {
  const s = str(u)
  return s !== undefined && s.length <= 2048 && (schemeOf(s) === "https" || schemeOf(s) === "http") ? s : null
}

/** An alert identity of bounded length: a long one is replaced by its digest (still stable, still unique). */
const boundKey = (key: string) =>
  key.length <= INBOUND_MAX_ALERT_KEY ? key : `sha256:${createHash("sha256").update(key).digest("hex")}`

/**
 * A payload kept within `INBOUND_MAX_PAYLOAD_BYTES`: as sent when it fits, else pruned (long strings cut, long
 * arrays shortened, deep levels dropped) until it does, else null. Unknown fields survive either way.
 */
export const boundPayload = (value: unknown): string | null => {
  if (value === undefined || value === null) return null
  const whole = JSON.stringify(value)
  if (whole.length <= INBOUND_MAX_PAYLOAD_BYTES && Buffer.byteLength(whole) <= INBOUND_MAX_PAYLOAD_BYTES) return whole
  for (const [maxString, maxItems, maxDepth] of [[1000, 20, 8], [200, 5, 6], [80, 3, 4]] as const) {
    const pruned = JSON.stringify(prune(value, maxString, maxItems, maxDepth))
    if (Buffer.byteLength(pruned) <= INBOUND_MAX_PAYLOAD_BYTES) return pruned
  }
  return null
}

const prune = (value: unknown, maxString: number, maxItems: number, depth: number): unknown => {
  if (typeof value === "string") return clip(value, maxString)
  if (typeof value !== "object" || value === null) return value
  if (depth === 0) return Array.isArray(value) ? [] : {}
  if (Array.isArray(value)) return value.slice(0, maxItems).map((v) => prune(v, maxString, maxItems, depth - 1))
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, prune(v, maxString, maxItems, depth - 1)]))
}

/**
 * The last step of every mapper: texts within the Event's bounds (a `strict` format — the spec's JSON, text, a
 * form — refuses what is over them, as the spec says; a sender's is cut), links checked, an empty message refused.
 */
export const finish = (
  format: InboundFormat,
  draft: Draft,
  payload: unknown,
  options: { readonly strict: boolean; readonly priority?: AlertPriority | undefined }
): Mapped | Refusal => {
  const title = draft.title === null || draft.title.trim() === "" ? null : draft.title.trim()
  if (draft.body.trim() === "") {
    return invalid("body", "The delivery carries no message text: send a non-empty body (or set the service's format or template).")
  }
  if (options.strict && title !== null && title.length > INBOUND_MAX_TITLE) {
    return invalid("body.title", `Expected a value with a length of at most ${INBOUND_MAX_TITLE}`)
  }
  if (options.strict && draft.body.length > INBOUND_MAX_BODY) {
    return invalid("body", `Expected a value with a length of at most ${INBOUND_MAX_BODY}`)
  }
  return {
    format,
    title: title === null ? null : clip(title, INBOUND_MAX_TITLE),
    body: clip(draft.body, INBOUND_MAX_BODY),
    url: tapUrl(draft.url),
    imageUrl: imageUrl(draft.imageUrl),
    // A resolved alert is good news: a quiet push, unless the sender's header asks otherwise.
    priority: options.priority ?? (draft.state === "resolved" ? "low" : draft.priority ?? "normal"),
    alertKey: draft.alertKey === undefined || draft.alertKey === null || draft.alertKey === "" ? null : boundKey(draft.alertKey),
    state: draft.state ?? null,
    payload: boundPayload(payload)
  }
}
