/**
 * On-call: for each group of the person's teams, who is on call now and
 * next, the person's own coming shifts, and the open pages they can act on
 * (acknowledge stops the escalation; escalate runs its next step now).
 */
import * as api from "../api.js"
import { html } from "../html.js"
import { useLiveItems } from "../live.js"
import { ErrorNote, formatTime, Loading, PageHead, Time, useAction, useLoad } from "../ui.js"

const pageState = {
  triggered: "Open",
  acknowledged: "Acknowledged",
  resolved: "Resolved"
}

/** Acknowledge and escalate of one page; `onChange` gets the page as it is now. */
export const PageActions = (/** @type {{ id: string, status?: string | null, onChange: (page: any) => void }} */ { id, status, onChange }) => {
  const action = useAction()
  const act = (/** @type {(o: any) => Promise<any>} */ call) =>
    action.run(async () => onChange(await call({ params: { id } })))
  if (status === "resolved") return null
  return html`<div class="toolbar" role="group" aria-label="Page actions">
      ${status !== "acknowledged" && html`<button type="button" class="primary" disabled=${action.busy} onClick=${() => act(api.pageAcknowledge)}>Acknowledge</button>`}
      ${status !== "acknowledged" && html`<button type="button" disabled=${action.busy} onClick=${() => act(api.pageEscalate)}>Escalate now</button>`}
    </div>
    <${ErrorNote} error=${action.error} />`
}

const Shift = (/** @type {{ shift: any, label: string }} */ { shift, label }) =>
  shift
    ? html`<p><span class="muted">${label}:</span> <strong>${shift.person?.name ?? shift.name ?? "—"}</strong>
        ${shift.startsAt && html` <span class="muted">${formatTime(shift.startsAt)} – ${formatTime(shift.endsAt)}</span>`}
        ${shift.override && html` <span class="badge">override</span>`}</p>`
    : html`<p><span class="muted">${label}:</span> nobody</p>`

const Group = (/** @type {{ group: any }} */ { group }) =>
  html`<li class="card">
    <h3>${group.name}${group.teamName && html` <span class="muted">· ${group.teamName}</span>`}</h3>
    <${Shift} label="On call now" shift=${group.current ?? group.now ?? null} />
    <${Shift} label="Next" shift=${group.next ?? group.upcoming?.[0] ?? null} />
  </li>`

const OpenPage = (/** @type {{ page: any, onChange: (page: any) => void }} */ { page, onChange }) =>
  html`<li class="card">
    <h3><a href=${`/inbox/${encodeURIComponent(`page:${page.id}`)}`}>${page.title}</a></h3>
    <p class="item-meta"><span class="badge page">${pageState[/** @type {keyof typeof pageState} */ (page.status)] ?? page.status}</span>
      <span>${page.groupName}</span> <${Time} at=${page.createdAt} />
      ${page.repeatCount > 0 && html`<span>repeated ${page.repeatCount}×</span>`}</p>
    ${page.body && html`<p>${page.body}</p>`}
    <${PageActions} id=${page.id} status=${page.status} onChange=${onChange} />
  </li>`

export default function Oncall() {
  const overview = useLoad(() => api.oncall(), [])
  const open = useLoad(() => api.pages({ query: { status: "open" } }), [])
  useLiveItems((item) => {
    if (item.id === "*" || item.origin === "page" || item.id.startsWith("page:")) open.reload()
  })
  const groups = overview.data?.groups ?? overview.data?.items ?? []
  const shifts = overview.data?.myShifts ?? overview.data?.shifts ?? []
  const pages = open.data?.items ?? []

  return html`<${PageHead} title="On-call" />
    <section aria-labelledby="open-pages">
      <h2 id="open-pages">Open pages</h2>
      <${ErrorNote} error=${open.error} />
      ${open.data === undefined
        ? open.loading ? html`<${Loading} />` : null
        : pages.length === 0
        ? html`<p class="empty">No open pages.</p>`
        : html`<ul class="cards">${pages.map((page) =>
          html`<${OpenPage} key=${page.id} page=${page} onChange=${() => open.reload()} />`
        )}</ul>`}
    </section>
    <section aria-labelledby="groups">
      <h2 id="groups">Who is on call</h2>
      <${ErrorNote} error=${overview.error} />
      ${overview.data === undefined
        ? overview.loading ? html`<${Loading} />` : null
        : groups.length === 0
        ? html`<p class="empty">None of your teams has an on-call group.</p>`
        : html`<ul class="cards">${groups.map((group) => html`<${Group} key=${group.id} group=${group} />`)}</ul>`}
    </section>
    <section aria-labelledby="my-shifts">
      <h2 id="my-shifts">My shifts</h2>
      ${shifts.length === 0
        ? html`<p class="empty">No shifts coming up.</p>`
        : html`<ul class="plain">${shifts.map((/** @type {any} */ s) =>
          html`<li><strong>${s.group?.name ?? s.groupName ?? ""}</strong> ${formatTime(s.shift?.startsAt ?? s.startsAt)} – ${formatTime(s.shift?.endsAt ?? s.endsAt)}</li>`
        )}</ul>`}
    </section>`
}
