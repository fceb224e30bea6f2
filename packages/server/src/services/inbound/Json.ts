/**
 * `json`: any other JSON. With the service's template (Template.ts) its
 * fields say what the title, body, link, priority, alert key and state are;
 * without one the common names are read (`title`/`subject`/`summary`,
 * `message`/`text`/`description`/`msg`/`details`, `url`/`link`,
 * `priority`/`severity`/`level`, `status`/`state` with `fingerprint`/`id` as
 * the alert's identity), and JSON with none of them shows as compact JSON.
 */
import type { InboundTemplate } from "@herald/api"
import type { InboundRequest, Mapped, Refusal } from "./Inbound.ts"
import { finish, first, headerPriority, isRecord, priorityOf, stateOf } from "./Inbound.ts"
import { applyTemplate } from "./Template.ts"

export const mapJson = (request: InboundRequest, value: unknown, template: InboundTemplate | null): Mapped | Refusal => {
  const options = { strict: false, priority: headerPriority(request) }
  if (template !== null) return finish("json", applyTemplate(template, value), value, options)
  if (!isRecord(value)) {
    return finish("json", { title: null, body: typeof value === "string" ? value : JSON.stringify(value) }, value, options)
  }
  const v = value
  const state = stateOf(first(v.status, v.state))
  return finish("json", {
    title: first(v.title, v.subject, v.summary, v.name) ?? null,
    body: first(v.message, v.text, v.description, v.msg, v.details, v.content, v.body) ?? JSON.stringify(v),
    url: first(v.url, v.link, v.href, v.click) ?? null,
    imageUrl: first(v.imageUrl, v.image, v.image_url) ?? null,
    priority: priorityOf(first(v.priority, v.severity, v.level)),
    alertKey: state === null ? null : first(v.alertKey, v.fingerprint, v.id, v.key) ?? null,
    state
  }, value, options)
}
