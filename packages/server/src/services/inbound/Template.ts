/**
 * A service's template (format `json`, docs/inbound-webhooks.md): each field
 * a string whose `{{path}}` placeholders read the delivery — dot names,
 * `[n]` indexes, `["odd key"]`. No expressions, no code: a path either finds
 * a value or renders empty. The grammar is the contract's (InboundFormats.ts),
 * so a template that was accepted always renders.
 */
import type { InboundTemplate } from "@herald/api"
import { TEMPLATE_PLACEHOLDER, templatePathSteps } from "@herald/api"
import type { Draft } from "./Inbound.ts"
import { clip, isRecord, priorityOf, stateOf } from "./Inbound.ts"

/** The value at `steps` inside `data`, or undefined. */
export const lookup = (data: unknown, steps: ReadonlyArray<string | number>): unknown => {
  let at: unknown = data
  for (const step of steps) {
    if (typeof step === "number") at = Array.isArray(at) ? at[step] : undefined
    else at = isRecord(at) && Object.hasOwn(at, step) ? at[step] : undefined
    if (at === undefined) return undefined
  }
  return at
}

// An object or array renders as compact JSON, cut so one placeholder cannot fill the body alone.
const textOf = (value: unknown): string =>
  value === undefined || value === null
    ? ""
    : typeof value === "string"
    ? value
    : typeof value === "number" || typeof value === "boolean"
    ? String(value)
    : clip(JSON.stringify(value), 2000)

/** The template with each placeholder replaced by its value's text. */
export const render = (template: string, data: unknown): string =>
  template.replace(TEMPLATE_PLACEHOLDER, (_whole, path: string) => {
    const steps = templatePathSteps(path)
    return steps === undefined ? "" : textOf(lookup(data, steps))
  })

/** The notification a template makes of a delivery. */
export const applyTemplate = (template: InboundTemplate, data: unknown): Draft => {
  const optional = (t: string | undefined) => t === undefined ? null : render(t, data).trim() || null
  return {
    title: optional(template.title),
    body: render(template.body, data),
    url: optional(template.url),
    priority: priorityOf(optional(template.priority)),
    alertKey: optional(template.alertKey),
    state: stateOf(optional(template.state))
  }
}
