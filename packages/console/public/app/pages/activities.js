/**
 * The person's live activities, active first, each drawn as its lock-screen
 * card (card.js). Refreshed every 15 seconds while the page is shown: the
 * inbox stream does not carry activity updates.
 */
import * as api from "../api.js"
import { LockScreenCard } from "../card.js"
import { html, useEffect } from "../html.js"
import { ErrorNote, Loading, PageHead, Time, useLoad } from "../ui.js"

const live = new Set(["starting", "active", "partial"])

export default function Activities() {
  const loaded = useLoad(() => api.activities(), [])
  useEffect(() => {
    const timer = setInterval(() => document.visibilityState === "visible" && loaded.reload(), 15_000)
    return () => clearInterval(timer)
  }, [])
  const items = loaded.data?.items ?? []
  const active = items.filter((a) => live.has(a.status))
  const past = items.filter((a) => !live.has(a.status))
  const list = (/** @type {any[]} */ group) =>
    html`<ul class="lock-cards">${group.map((a) =>
      html`<li key=${a.id}><${LockScreenCard} activity=${a} /><p class="muted small">Updated <${Time} at=${a.updatedAt} /></p></li>`
    )}</ul>`
  return html`<${PageHead} title="Live activities" />
    <p class="muted">How each card looks on a phone's lock screen. Text past a layout's visible budget is cut as a phone would cut it.</p>
    <${ErrorNote} error=${loaded.error} />
    ${loaded.data === undefined
      ? loaded.loading ? html`<${Loading} />` : null
      : items.length === 0
      ? html`<p class="empty">No live activities. An agent starts one with POST /api/agent/activities.</p>`
      : html`${active.length > 0 && html`<h2>Active</h2>${list(active)}`}${past.length > 0 && html`<h2>Ended</h2>${list(past)}`}`}`
}
