/**
 * `grafana` (unified alerting's webhook contact point): Alertmanager's group
 * shape (Alertmanager.ts) plus `orgId`, a panel or dashboard link and a
 * screenshot (`imageURL`) per alert, which the push uses.
 */
import type { Mapped, Refusal } from "./Inbound.ts"
import { field, first, isRecord } from "./Inbound.ts"
import { alertGroupDraft, mapAlertGroup } from "./Alertmanager.ts"

export const mapGrafana = (value: unknown): Mapped | Refusal =>
  mapAlertGroup("grafana", value, (v) => {
    const alert = (Array.isArray(v.alerts) ? v.alerts : []).find(isRecord)
    return alertGroupDraft(v, {
      url: first(field(alert, "panelURL"), field(alert, "dashboardURL"), field(alert, "generatorURL"), v.externalURL) ?? null,
      imageUrl: field(alert, "imageURL")
    })
  })
