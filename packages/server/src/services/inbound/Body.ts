/**
 * Reading a delivery's body by its media type: JSON, a form's key=value
 * pairs (or, when `curl -d 'disk full'` sent no pairs, the text), or text.
 * A binary type is 415; text the database cannot store is 400 (the edge's
 * guard checks JSON and `text/*` before this; form values are decoded here).
 */
import { textHasNul, unstorableMessage } from "../../http/StorableText.ts"
import type { InboundBody, InboundRequest } from "./Inbound.ts"
import { invalid, Refusal } from "./Inbound.ts"

export type MediaKind = "json" | "form" | "text" | "none" | "binary"

// Textual types that are not text/*: what monitoring and CI tools send as text.
const textualApplication = /^application\/(?:.*\+xml|xml|x-yaml|yaml|.*\+yaml|javascript|x-ndjson|graphql|x-sh|toml|csv|x-log)$/

/** The body's kind from `Content-Type` (case-insensitive, parameters dropped). */
export const mediaOf = (contentType: string | undefined): MediaKind => {
  const type = (contentType ?? "").toLowerCase().split(";")[0]!.trim()
  if (type === "") return "none"
  if (type === "application/json" || type.endsWith("+json") || /^application\/(?:x-)?[\w.-]*json$/.test(type)) return "json"
  if (type === "application/x-www-form-urlencoded") return "form"
  if (type.startsWith("text/") || textualApplication.test(type)) return "text"
  return "binary"
}

// `key=value&…` as a form encodes it: keys of URL-safe characters (curl --data-urlencode, HTML forms).
const pair = /^[A-Za-z0-9_.~%+\-[\]]+=[^&]*$/

const parseJson = (text: string): InboundBody | Refusal => {
  try {
    return { kind: "json", value: JSON.parse(text) }
  } catch {
    return invalid("body", "Expected a valid JSON body")
  }
}

/** The parsed body; a body that is empty or only blanks is refused (nothing to tell anyone). */
export const parseBody = (request: InboundRequest, media: MediaKind): InboundBody | Refusal => {
  if (media === "binary") {
    return new Refusal(415, "Send the delivery as JSON, application/x-www-form-urlencoded or text (docs/inbound-webhooks.md).")
  }
  const text = request.text
  if (text.trim() === "") return invalid("body", "The delivery is empty: send a message.")
  if (media === "json") return parseJson(text)
  // No type declared, or a form type on JSON (`curl -d '{…}'` without -H): JSON when it parses, else as declared.
  if (media === "none" || media === "form") {
    const t = text.trimStart()
    if (t.startsWith("{") || t.startsWith("[")) {
      const json = parseJson(text)
      if (!(json instanceof Refusal)) return json
    }
    if (media === "none") return { kind: "text", text }
  }
  if (media === "form") {
    const parts = text.split("&").filter((p) => p !== "")
    if (parts.length === 0 || !parts.every((p) => pair.test(p))) return { kind: "text", text }
    const fields: Record<string, string> = {}
    for (const [key, value] of new URLSearchParams(text)) {
      if (textHasNul(key) || textHasNul(value)) return invalid("body", unstorableMessage)
      // A key sent twice keeps its first value, as the decoders of the other routes do.
      if (!(key in fields)) fields[key] = value
    }
    return { kind: "form", fields }
  }
  if (textHasNul(text)) return invalid("body", unstorableMessage)
  return { kind: "text", text }
}
