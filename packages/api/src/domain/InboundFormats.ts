/**
 * What a webhook service accepts (docs/inbound-webhooks.md): the senders whose
 * payloads Herald reads, the template a service may store to map generic JSON,
 * and the template's grammar, which the contract owns so a bad template is a
 * 400 at create/update rather than a surprise at delivery.
 */
import { Schema } from "effect"

/**
 * How a service reads its deliveries (decisions.md names them): `herald` is the spec's JSON; `json` is any other
 * JSON, mapped by the service's template (or the common field names without one). A service without a format
 * (`null`) has each delivery's detected from its headers and shape.
 */
export const InboundFormat = Schema.Literals([
  "herald",
  "grafana",
  "alertmanager",
  "github",
  "gitlab",
  "uptime-kuma",
  "sentry",
  "form",
  "text",
  "json"
]).annotate({ identifier: "InboundFormat" })
export type InboundFormat = typeof InboundFormat.Type

/** Whether a delivery fires an alert or resolves it (`null`: not an alert, e.g. a push to a repository). */
export const AlertState = Schema.Literals(["firing", "resolved"]).annotate({ identifier: "AlertState" })
export type AlertState = typeof AlertState.Type

/** A template string is at most this long, with at most `TEMPLATE_MAX_PLACEHOLDERS` placeholders. */
export const TEMPLATE_MAX_LENGTH = 1000
export const TEMPLATE_MAX_PLACEHOLDERS = 20
/** A placeholder's path has at most this many steps (`a.b[0].c` is four). */
export const TEMPLATE_MAX_PATH_STEPS = 16

/**
 * One placeholder: `{{ path }}` where a path is dot-separated names (letters, digits, `_`, `-`, `$`, `@`) and
 * array indexes (`[0]`), or a quoted key (`["a.b"]`) for names with other characters.
 */
const NAME = String.raw`[A-Za-z0-9_$@-]+`
const STEP = String.raw`(?:\[\d{1,6}\]|\["[^"\\{}]{1,100}"\])`
export const TEMPLATE_PATH = new RegExp(String.raw`^(?:${NAME}|${STEP})(?:\.${NAME}|${STEP})*$`)
export const TEMPLATE_PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g

/** The path's steps: names and indexes, in order (undefined: not a path). */
export const templatePathSteps = (path: string): ReadonlyArray<string | number> | undefined => {
  if (!TEMPLATE_PATH.test(path)) return undefined
  const steps: Array<string | number> = []
  for (const m of path.matchAll(/([A-Za-z0-9_$@-]+)|\[(\d+)\]|\["([^"]*)"\]/g)) {
    steps.push(m[1] !== undefined ? m[1] : m[2] !== undefined ? Number(m[2]) : m[3]!)
  }
  return steps
}

/** Why a template string is refused, or undefined when it is well formed. */
export const templateProblem = (template: string): string | undefined => {
  let count = 0
  for (const m of template.matchAll(TEMPLATE_PLACEHOLDER)) {
    count++
    const steps = templatePathSteps(m[1]!)
    if (steps === undefined) return `"{{${m[1]}}}" is not a path such as {{alerts[0].labels.instance}}.`
    if (steps.length > TEMPLATE_MAX_PATH_STEPS) return `A path has at most ${TEMPLATE_MAX_PATH_STEPS} steps.`
  }
  if (count > TEMPLATE_MAX_PLACEHOLDERS) return `A template has at most ${TEMPLATE_MAX_PLACEHOLDERS} placeholders.`
  // Whatever is left once the placeholders are gone must hold no half of one.
  if (/\{\{|\}\}/.test(template.replace(TEMPLATE_PLACEHOLDER, ""))) return "Every {{ needs its }} (and a path between)."
  return undefined
}

const TemplateText = Schema.String.check(
  Schema.isMinLength(1),
  Schema.isMaxLength(TEMPLATE_MAX_LENGTH),
  Schema.makeFilter((s: string) => templateProblem(s) ?? true, { expected: "a template: text with {{path}} placeholders" })
)

/**
 * A service's mapping of generic JSON (format `json`): each field a template whose `{{path}}` placeholders read
 * the delivery (`{{alert.labels.instance}}`, `{{items[0].name}}`). A missing value renders empty; an object or
 * array renders as compact JSON. `priority` renders a severity word (table in docs/inbound-webhooks.md), `state`
 * a status word (`firing`/`resolved` and their synonyms), `alertKey` the alert's identity.
 */
export const InboundTemplate = Schema.Struct({
  title: Schema.optionalKey(TemplateText),
  body: TemplateText,
  url: Schema.optionalKey(TemplateText),
  priority: Schema.optionalKey(TemplateText),
  alertKey: Schema.optionalKey(TemplateText),
  state: Schema.optionalKey(TemplateText)
}).annotate({
  identifier: "InboundTemplate",
  description: "How a `json` delivery becomes a notification: each field text with `{{path}}` placeholders (dot names, " +
    "`[n]` indexes, `[\"quoted key\"]`), at most 1,000 characters and 20 placeholders. A missing value renders empty; " +
    "`priority` renders a severity word, `state` firing/resolved or a synonym (docs/inbound-webhooks.md)."
})
export type InboundTemplate = typeof InboundTemplate.Type
