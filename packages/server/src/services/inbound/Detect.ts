/**
 * Which format reads a delivery (docs/inbound-webhooks.md, "Detection"): the
 * service's own when it names one and the body can be read that way, else
 * detected — the sender's header first (GitHub, GitLab, Sentry), then the
 * media type (a form, text), then the JSON's shape.
 */
import type { InboundFormat } from "@herald/api"
import type { InboundBody, InboundRequest } from "./Inbound.ts"
import { isRecord } from "./Inbound.ts"
import type { MediaKind } from "./Body.ts"

// The spec's four fields: JSON carrying only these (or `body`) is the spec's format.
const heraldKeys = new Set(["title", "body", "imageUrl", "url"])

/** The format of a JSON delivery from its shape alone. */
export const shapeOf = (value: unknown): InboundFormat => {
  if (!isRecord(value)) return "json"
  if (Array.isArray(value.alerts) && (typeof value.receiver === "string" || typeof value.groupKey === "string")) {
    // Grafana's unified alerting adds `orgId` (and the deprecated `state`/`title`/`message`) and says version 1.
    return "orgId" in value || value.version === "1" || "state" in value ? "grafana" : "alertmanager"
  }
  if ("heartbeat" in value && "monitor" in value && "msg" in value) return "uptime-kuma"
  // Sentry's legacy webhooks plugin (no Sentry-Hook-Resource header).
  if (("project_name" in value || "project_slug" in value) && "culprit" in value && "level" in value) return "sentry"
  if (typeof value.object_kind === "string") return "gitlab"
  if ("body" in value || Object.keys(value).every((key) => heraldKeys.has(key))) return "herald"
  return "json"
}

/** The format the delivery is read as. */
export const detect = (
  request: InboundRequest,
  body: InboundBody,
  media: MediaKind,
  chosen: InboundFormat | null
): InboundFormat => {
  if (chosen === "text") return "text"
  if (chosen !== null) {
    // A chosen format reads its kind of body; a text or form body is read as what it is.
    if (body.kind === "form" || (media === "form" && chosen !== "json")) return "form"
    if (body.kind === "text") return "text"
    return chosen === "form" ? "json" : chosen
  }
  const headers = request.headers
  if (headers["x-github-event"] !== undefined) return "github"
  if (headers["x-gitlab-event"] !== undefined) return "gitlab"
  if (headers["sentry-hook-resource"] !== undefined) return "sentry"
  if (media === "form") return "form"
  if (body.kind === "text") return "text"
  if (body.kind === "form") return "form"
  return shapeOf(body.value)
}
