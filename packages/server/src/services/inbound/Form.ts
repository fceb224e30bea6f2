/**
 * `form` (application/x-www-form-urlencoded, `curl -d`): `title` (or
 * `subject`), `message` (or `body`, `text`, `msg`), `url` (or `click`),
 * `priority` (a severity word or ntfy's 1–5). A form with none of the message
 * fields shows its fields as `key: value` lines; a body that is not key=value
 * pairs is the message itself. Checked like the spec's JSON (strict).
 */
import type { InboundBody, InboundRequest, Mapped, Refusal } from "./Inbound.ts"
import { finish, first, headerPriority, priorityOf } from "./Inbound.ts"

const named = new Set(["title", "subject", "message", "body", "text", "msg", "url", "click", "priority"])

export const mapForm = (request: InboundRequest, body: InboundBody): Mapped | Refusal => {
  if (body.kind !== "form") {
    const text = body.kind === "text" ? body.text : request.text
    return finish("form", { title: null, body: text }, null, { strict: true, priority: headerPriority(request) })
  }
  const f = body.fields
  const message = first(f.message, f.body, f.text, f.msg) ??
    Object.entries(f).filter(([key]) => !named.has(key)).map(([key, value]) => `${key}: ${value}`).join("\n")
  return finish("form", {
    title: first(f.title, f.subject) ?? null,
    body: message,
    url: first(f.url, f.click) ?? null,
    priority: priorityOf(f.priority)
  }, f, { strict: true, priority: headerPriority(request) })
}
