/**
 * Accessibility checks with axe-core in the real page. The console's CSP
 * forbids inline and injected scripts, so axe's source is evaluated through
 * the DevTools protocol (which the page's CSP does not govern) rather than
 * added as a script tag; the page under test keeps its real policy.
 */
import { createRequire } from "node:module"
import * as fs from "node:fs"
import type { Page } from "playwright-core"

const axeSource = fs.readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8")

export interface Violation {
  readonly id: string
  readonly impact: string | null
  readonly help: string
  readonly nodes: ReadonlyArray<string>
}

/** axe's serious and critical violations on the page as it is now (WCAG 2.x A and AA rules and best practices). */
export const seriousViolations = async (page: Page): Promise<ReadonlyArray<Violation>> => {
  await page.evaluate(axeSource)
  const violations = await page.evaluate(`axe.run(document, { resultTypes: ["violations"] }).then((r) => r.violations.map((v) => ({
    id: v.id, impact: v.impact, help: v.help, nodes: v.nodes.map((n) => n.target.join(" ") + " — " + (n.failureSummary || "").replace(/\\s+/g, " "))
  })))`) as ReadonlyArray<Violation>
  return violations.filter((v) => v.impact === "serious" || v.impact === "critical")
}

/** Waits until the console page has drawn its content: a heading in the main landmark and nothing still loading. */
export const pageSettled = (page: Page) =>
  page.waitForFunction(() => {
    // A function, not a string: the page's CSP forbids evaluating strings in it. No DOM types here.
    type Element = { readonly innerText: string; readonly querySelector: (selector: string) => Element | null }
    const main = (globalThis as unknown as { document: Element }).document.querySelector("main")
    return main !== null && main.querySelector("h1") !== null && !main.innerText.includes("Loading…")
  })
