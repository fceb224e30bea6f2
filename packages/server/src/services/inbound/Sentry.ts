/**
 * `sentry` (integration platform webhooks, `Sentry-Hook-Resource`; and the
 * legacy webhooks plugin): an issue alert (`event_alert`) fires the issue's
 * alert, an issue webhook `created`/`unresolved` fires it and `resolved`
 * resolves it, a metric alert's `critical`/`warning` fire its alert and
 * `resolved` resolves it. The event's or issue's `level` is the priority.
 */
import type { InboundRequest, Mapped, Refusal } from "./Inbound.ts"
import { field, finish, first, isRecord, lines, priorityOf, str } from "./Inbound.ts"

export const mapSentry = (request: InboundRequest, value: unknown): Mapped | Refusal => {
  const v = isRecord(value) ? value : {}
  const resource = request.headers["sentry-hook-resource"]
  const action = str(v.action)
  const data = isRecord(v.data) ? v.data : {}

  if (resource === "event_alert" || resource === "error") {
    const event = isRecord(data.event) ? data.event : isRecord(data.error) ? data.error : {}
    const issueId = str(event.issue_id)
    return finish("sentry", {
      title: first(event.title, field(event.metadata, "value"), event.message) ?? "Sentry alert",
      body: lines(first(event.culprit, event.location), first(data.triggered_rule) !== undefined ? `Rule: ${str(data.triggered_rule)}` : undefined) ||
        first(event.message, event.title) || "Sentry event",
      url: first(event.web_url),
      priority: priorityOf(event.level),
      alertKey: resource === "event_alert" && issueId !== undefined ? `issue:${issueId}` : null,
      state: resource === "event_alert" ? "firing" : null
    }, value, { strict: false })
  }
  if (resource === "issue") {
    const issue = isRecord(data.issue) ? data.issue : {}
    const id = str(issue.id)
    const state = action === "created" || action === "unresolved" ? "firing" : action === "resolved" ? "resolved" : null
    return finish("sentry", {
      title: `${action === "resolved" ? "Resolved: " : action === "created" || action === "unresolved" ? "" : `${action ?? "issue"}: `}${first(issue.title) ?? "Sentry issue"}`,
      body: lines(first(issue.culprit), [first(issue.shortId), first(field(issue.project, "name"))].filter((x) => x !== undefined).join(" · ")) || "Sentry issue",
      url: first(issue.web_url, issue.permalink),
      priority: priorityOf(issue.level),
      alertKey: id !== undefined && state !== null ? `issue:${id}` : null,
      state
    }, value, { strict: false })
  }
  if (resource === "metric_alert") {
    const id = str(field(data.metric_alert, "id"))
    return finish("sentry", {
      title: first(data.description_title, field(field(data.metric_alert, "alert_rule"), "name")) ?? "Sentry metric alert",
      body: first(data.description_text) ?? action ?? "metric alert",
      url: first(data.web_url),
      priority: action === "critical" ? "critical" : action === "warning" ? "high" : undefined,
      alertKey: id !== undefined ? `metric_alert:${id}` : null,
      state: action === "critical" || action === "warning" ? "firing" : action === "resolved" ? "resolved" : null
    }, value, { strict: false })
  }
  if (resource === undefined && ("culprit" in v || "project_name" in v)) {
    // The legacy webhooks plugin: one error event, its issue's id as `id`.
    const id = str(v.id)
    return finish("sentry", {
      title: first(v.message, field(v.event, "title")) ?? "Sentry error",
      body: lines(first(v.culprit), first(v.project_name)) || "Sentry error",
      url: first(v.url),
      priority: priorityOf(v.level),
      alertKey: id !== undefined ? `issue:${id}` : null,
      state: "firing"
    }, value, { strict: false })
  }
  return finish("sentry", {
    title: `Sentry: ${resource ?? "event"}${action !== undefined ? ` ${action}` : ""}`,
    body: first(field(data.comment, "comment"), data.comment, field(data.installation, "status"), action) ?? resource ?? "Sentry",
    priority: "low"
  }, value, { strict: false })
}
