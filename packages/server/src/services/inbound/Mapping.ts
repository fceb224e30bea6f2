/**
 * A delivery to what Herald stores and pushes: its body read by media type
 * (Body.ts), its format chosen or detected (Detect.ts), then its sender's
 * mapper (one module each). Pure: Services.deliver calls it once the
 * service is known.
 */
import type { InboundFormat, InboundTemplate } from "@herald/api"
import { mapAlertmanager } from "./Alertmanager.ts"
import { mediaOf, parseBody } from "./Body.ts"
import { detect } from "./Detect.ts"
import { mapForm } from "./Form.ts"
import { mapGitHub } from "./GitHub.ts"
import { mapGitLab } from "./GitLab.ts"
import { mapGrafana } from "./Grafana.ts"
import { mapHerald } from "./Herald.ts"
import type { InboundBody, InboundRequest, Mapped } from "./Inbound.ts"
import { headerPriority, isRecord, Refusal } from "./Inbound.ts"
import { mapJson } from "./Json.ts"
import { mapSentry } from "./Sentry.ts"
import { mapText } from "./Text.ts"
import { mapUptimeKuma } from "./UptimeKuma.ts"

export interface ServiceFormat {
  readonly format: InboundFormat | null
  readonly template: InboundTemplate | null
}

// GitHub (and GitLab's system hooks) can post a form whose `payload` field is the JSON.
const formPayload = (body: InboundBody): InboundBody => {
  if (body.kind !== "form" || typeof body.fields.payload !== "string") return body
  try {
    const value: unknown = JSON.parse(body.fields.payload)
    return isRecord(value) ? { kind: "json", value } : body
  } catch {
    return body
  }
}

/** The delivery read by its format; ntfy's `X-Priority`/`Priority` header, when it names one, sets the priority. */
export const mapDelivery = (request: InboundRequest, service: ServiceFormat): Mapped | Refusal => {
  const mapped = mapByFormat(request, service)
  const priority = headerPriority(request)
  return mapped instanceof Refusal || priority === undefined ? mapped : { ...mapped, priority }
}

const mapByFormat = (request: InboundRequest, service: ServiceFormat): Mapped | Refusal => {
  const media = mediaOf(request.contentType)
  const parsed = parseBody(request, media)
  if (parsed instanceof Refusal) return parsed
  const senderHeader = request.headers["x-github-event"] ?? request.headers["x-gitlab-event"]
  const body = senderHeader !== undefined || service.format === "github" || service.format === "gitlab" ? formPayload(parsed) : parsed
  const format = detect(request, body, body.kind === "json" ? "json" : media, service.format)
  const value = body.kind === "json" ? body.value : undefined
  switch (format) {
    case "herald":
      return mapHerald(request, value)
    case "grafana":
      return mapGrafana(value)
    case "alertmanager":
      return mapAlertmanager(value)
    case "github":
      return mapGitHub(request, value)
    case "gitlab":
      return mapGitLab(request, value)
    case "uptime-kuma":
      return mapUptimeKuma(value)
    case "sentry":
      return mapSentry(request, value)
    case "form":
      return mapForm(request, body)
    case "text":
      return mapText(request)
    case "json":
      return mapJson(request, value, service.template)
  }
}
