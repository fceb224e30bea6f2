/**
 * Suggested visible-character budgets of live-activity text (spec Limits):
 * not limits — the text is sent whole — but a warning when a field will
 * likely be cut on the lock screen. Line 2 shows `subtitle`, or `status`
 * when there is no subtitle. The compact presentation shows only `status`
 * (8 characters) when there is no progress (its percentage wins otherwise);
 * the terminal layout never shows status there (budget 0).
 */
import { BudgetWarning, LiveActivityTextBudgets } from "@herald/api"
import type { LiveActivityLayout } from "@herald/api"

const budgets: Record<LiveActivityLayout, { readonly title: number; readonly line2: number; readonly detail: number }> = {
  standard: { title: 32, line2: 36, detail: 100 },
  ring: { title: 32, line2: 30, detail: 80 },
  hero: { title: 24, line2: 36, detail: 100 },
  terminal: { title: 36, line2: 40, detail: 100 },
  steps: { title: 32, line2: 36, detail: 100 }
}

const COMPACT_STATUS = 8

/** Visible characters, not UTF-16 units: an emoji counts once. */
const length = (text: string) => [...text].length

/** The layout the card is drawn with: `props.layout`, else `standard`. */
const layoutOf = (props: Readonly<Record<string, unknown>>): LiveActivityLayout =>
  (typeof props.layout === "string" && props.layout in budgets ? props.layout : "standard") as LiveActivityLayout

/** The budgets of the props' layout, as the console draws the card with them. */
export const textBudgets = (props: Readonly<Record<string, unknown>>): LiveActivityTextBudgets => {
  const layout = layoutOf(props)
  return new LiveActivityTextBudgets({
    layout,
    ...budgets[layout],
    compactStatus: layout === "terminal" ? 0 : COMPACT_STATUS
  })
}

export const budgetWarnings = (props: Readonly<Record<string, unknown>>): ReadonlyArray<BudgetWarning> => {
  const layout = layoutOf(props)
  const budget = budgets[layout]
  const text = (field: string) => typeof props[field] === "string" ? props[field] : undefined
  const warnings: Array<BudgetWarning> = []
  const check = (field: string, limit: number, shownIn: string) => {
    const value = text(field)
    if (value !== undefined && length(value) > limit) {
      warnings.push(new BudgetWarning({ field, layout: shownIn, length: length(value), budget: limit }))
    }
  }
  check("title", budget.title, layout)
  check(text("subtitle") !== undefined ? "subtitle" : "status", budget.line2, layout)
  check("detail", budget.detail, layout)
  if (props.progress === undefined || props.progress === null) {
    check("status", layout === "terminal" ? 0 : COMPACT_STATUS, "compact")
  }
  return warnings
}
