/**
 * A live activity drawn as its lock-screen card, per layout (standard, ring,
 * hero, terminal, steps), with the spec's suggested visible-character
 * budgets (Limits), as the Person API gives them with each activity
 * (`budgets`, `budgetWarnings`; the table below only when absent): text past
 * a field's budget is cut with "…" as a phone would likely cut it, and the
 * card lists what did not fit. Line 2 shows the
 * subtitle, or the status when there is none; the compact presentation shows
 * the percentage when there is progress, else the status (8 characters; the
 * terminal layout never shows status there, but its prompt icon).
 */
import { html } from "./html.js"

const budgets = {
  standard: { title: 32, line2: 36, detail: 100, compactStatus: 8 },
  ring: { title: 32, line2: 30, detail: 80, compactStatus: 8 },
  hero: { title: 24, line2: 36, detail: 100, compactStatus: 8 },
  terminal: { title: 36, line2: 40, detail: 100, compactStatus: 0 },
  steps: { title: 32, line2: 36, detail: 100, compactStatus: 8 }
}

/** Visible characters (an emoji counts once), as the server counts them. */
const chars = (/** @type {string} */ text) => [...text]

/** The text as shown within `budget` characters. */
export const fit = (/** @type {string} */ text, /** @type {number} */ budget) => {
  const c = chars(text)
  return c.length <= budget ? text : budget <= 0 ? "" : c.slice(0, Math.max(0, budget - 1)).join("") + "…"
}

const str = (/** @type {unknown} */ v) => (typeof v === "string" ? v : undefined)

/** A step of the `steps` layout: its shape is not fixed, so strings and the common object forms are read. */
const stepOf = (/** @type {any} */ step) => {
  if (typeof step === "string") return { label: step, state: "pending" }
  const label = str(step?.title) ?? str(step?.label) ?? str(step?.name) ?? str(step?.text) ?? ""
  const raw = str(step?.state) ?? str(step?.status) ?? (step?.done === true ? "done" : step?.active === true ? "active" : "pending")
  const state = /^(done|complete|completed|success|succeeded|ok)$/i.test(raw)
    ? "done"
    : /^(active|running|current|in_progress|in-progress)$/i.test(raw)
    ? "active"
    : /^(failed|error)$/i.test(raw)
    ? "failed"
    : "pending"
  return { label, state }
}

const stepMark = { done: "✓", active: "●", failed: "✕", pending: "○" }

const Ring = (/** @type {{ progress: number | undefined }} */ { progress }) => {
  const r = 20
  const length = 2 * Math.PI * r
  const shown = progress ?? 0
  return html`<svg class="ring" viewBox="0 0 48 48" width="48" height="48" aria-hidden="true">
    <circle cx="24" cy="24" r=${r} class="ring-track" />
    <circle cx="24" cy="24" r=${r} class="ring-fill" stroke-dasharray=${`${length * shown} ${length}`} transform="rotate(-90 24 24)" />
    <text x="24" y="28" text-anchor="middle">${progress === undefined ? "" : Math.round(progress * 100)}</text>
  </svg>`
}

const Bar = (/** @type {{ progress: number | undefined }} */ { progress }) =>
  progress === undefined ? null : html`<progress max="1" value=${progress} aria-label="Progress">${Math.round(progress * 100)}%</progress>`

/** @param {{ activity: any }} props */
export const LockScreenCard = ({ activity }) => {
  const p = activity.props ?? {}
  const layout = /** @type {keyof typeof budgets} */ (str(p.layout) in budgets ? p.layout : "standard")
  const budget = activity.budgets ?? budgets[layout]
  const progress = typeof p.progress === "number" ? Math.min(1, Math.max(0, p.progress)) : undefined
  const title = str(p.title) ?? ""
  const line2Field = str(p.subtitle) !== undefined ? "subtitle" : "status"
  const line2 = str(p[line2Field]) ?? ""
  const detail = str(p.detail) ?? ""
  const percent = progress === undefined ? undefined : `${Math.round(progress * 100)}%`

  /** @type {{ field: string, layout: string, length: number, budget: number }[]} */
  const warnings = activity.budgetWarnings ?? []
  const over = warnings.map((w) =>
    `${w.field}: ${w.length} characters, ${w.layout === "compact" ? "the compact view" : `the ${w.layout} layout`} shows about ${w.budget}`
  )
  const compact = percent ?? (layout === "terminal" ? "›_" : fit(str(p.status) ?? "", budget.compactStatus))

  const accent = str(p.accent)
  const icon = str(p.icon)
  const steps = Array.isArray(p.steps) ? p.steps.map(stepOf) : []
  const ended = activity.status === "ended" || activity.status === "expired" || activity.status === "failed"

  const text = html`<div class="card-text">
    <p class="card-title">${icon && chars(icon).length <= 2 && html`<span aria-hidden="true">${icon} </span>`}${fit(title, budget.title)}</p>
    ${line2 && html`<p class="card-line2">${fit(line2, budget.line2)}</p>`}
    ${detail && html`<p class="card-detail">${fit(detail, budget.detail)}</p>`}
  </div>`

  return html`<article class=${`lock-card layout-${layout}${ended ? " ended" : ""}`} aria-label=${`Live activity: ${title}`}
      style=${accent ? { "--accent": accent } : undefined}>
    <div class="lock-screen">
      ${layout === "ring" && html`<div class="card-row"><${Ring} progress=${progress} />${text}</div>`}
      ${layout === "hero" && html`<div class="card-row">${text}${percent && html`<p class="hero-figure">${percent}</p>`}</div><${Bar} progress=${progress} />`}
      ${layout === "terminal" && html`<div class="terminal"><span class="prompt-icon" aria-hidden="true">›_</span>${text}${percent && html`<span class="term-pct">${percent}</span>`}</div>`}
      ${layout === "steps" && html`${text}<ol class="steps">${steps.map((s) =>
        html`<li class=${`step ${s.state}`}><span aria-hidden="true">${stepMark[/** @type {keyof typeof stepMark} */ (s.state)]}</span> ${fit(s.label, 24)}<span class="sr-only"> (${s.state})</span></li>`
      )}</ol><${Bar} progress=${progress} />`}
      ${layout === "standard" && html`${text}<${Bar} progress=${progress} />`}
    </div>
    <p class="card-foot">
      ${compact ? html`<span class="compact" title="Compact view">${compact}</span>` : html`<span></span>`}
      <span class="muted">${layout} · ${activity.status}</span>
    </p>
    ${over.length > 0 && html`<ul class="over" aria-label="Text past the visible budget">${over.map((o) => html`<li>${o}</li>`)}</ul>`}
  </article>`
}
