/**
 * `alertmanager` (Prometheus Alertmanager's webhook, version 4) and the shape
 * Grafana's unified alerting shares with it: one notification per alert
 * group. The group key is the alert's identity (a repeat replaces the last
 * push, `resolved` withdraws it), the top-level status firing or resolved,
 * `severity` among the common labels (else the first alert's) the priority.
 */
import type { InboundFormat } from "@herald/api"
import type { Draft, Mapped, Refusal } from "./Inbound.ts"
import { field, finish, first, isRecord, lines, priorityOf, stateOf, str } from "./Inbound.ts"

const SHOWN = 5

/** The Draft of an alert group; `extra` adds what one sender has beyond the other (Grafana's URLs). */
export const alertGroupDraft = (v: Record<string, unknown>, extra: { readonly url?: string | null; readonly imageUrl?: unknown } = {}): Draft => {
  const alerts = (Array.isArray(v.alerts) ? v.alerts : []).filter(isRecord)
  const state = stateOf(v.status)
  const common = (key: string) => str(field(v.commonLabels, key)) ?? str(field(v.groupLabels, key))
  const names = [...new Set(alerts.map((a) => str(field(a.labels, "alertname"))).filter((n) => n !== undefined))]
  const name = common("alertname") ?? (names.length > 0 ? names.join(", ") : undefined)
  const firing = alerts.filter((a) => a.status === "firing").length
  const count = state === "resolved" ? alerts.length : firing || alerts.length
  const label = `[${state === "resolved" ? "RESOLVED" : "FIRING"}${count > 0 ? `:${count}` : ""}]`
  const summaryOf = (a: Record<string, unknown>) =>
    first(field(a.annotations, "summary"), field(a.annotations, "description"), field(a.annotations, "message"), field(a.labels, "alertname"))
  const body = alerts.length === 1
    ? lines(
      first(field(v.commonAnnotations, "summary"), field(alerts[0]!.annotations, "summary")),
      first(field(alerts[0]!.annotations, "description"), field(alerts[0]!.annotations, "message")),
      str(field(alerts[0]!.labels, "instance"))
    )
    : lines(
      ...alerts.slice(0, SHOWN).map((a) => {
        const instance = str(field(a.labels, "instance"))
        return `• ${summaryOf(a) ?? "alert"}${instance !== undefined ? ` (${instance})` : ""}`
      }),
      alerts.length > SHOWN ? `… and ${alerts.length - SHOWN} more` : undefined
    )
  const severity = common("severity") ?? str(field(alerts[0]?.labels, "severity"))
  return {
    title: `${label} ${name ?? first(v.receiver) ?? "alert"}`,
    body: body === "" ? first(v.message, field(v.commonAnnotations, "description")) ?? "" : body,
    url: extra.url ?? first(alerts[0]?.generatorURL, v.externalURL) ?? null,
    imageUrl: extra.imageUrl === undefined ? null : str(extra.imageUrl) ?? null,
    priority: priorityOf(severity),
    // A group with no key of its own (a hand-made payload): its single alert's fingerprint.
    alertKey: first(v.groupKey, alerts.length === 1 ? alerts[0]!.fingerprint : undefined) ?? null,
    state
  }
}

export const mapAlertGroup = (format: InboundFormat, value: unknown, draft: (v: Record<string, unknown>) => Draft): Mapped | Refusal =>
  finish(format, isRecord(value) ? draft(value) : { title: null, body: "" }, value, { strict: false })

export const mapAlertmanager = (value: unknown): Mapped | Refusal => mapAlertGroup("alertmanager", value, (v) => alertGroupDraft(v))
