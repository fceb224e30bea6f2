/** The teams and families the person belongs to, with their role in each. */
import * as api from "../api.js"
import { html } from "../html.js"
import { ErrorNote, Loading, PageHead, useLoad } from "../ui.js"

export const kindLabel = { family: "Family", team: "Team" }
export const roleLabel = { owner: "Owner", admin: "Admin", member: "Member" }

export default function Teams() {
  const loaded = useLoad(() => api.teams(), [])
  const items = loaded.data?.items ?? []
  return html`<${PageHead} title="Teams and families" />
    <${ErrorNote} error=${loaded.error} />
    ${loaded.data === undefined
      ? loaded.loading ? html`<${Loading} />` : null
      : items.length === 0
      ? html`<p class="empty">You are in no team or family yet. An invite link from a member brings you in.</p>`
      : html`<ul class="cards">${items.map((/** @type {any} */ t) =>
        html`<li key=${t.id} class="card">
          <h2 class="h3"><a href=${`/teams/${encodeURIComponent(t.id)}`}>${t.name}</a></h2>
          <p class="item-meta"><span class="badge">${kindLabel[/** @type {"team"} */ (t.kind ?? "team")] ?? t.kind}</span>
            <span>${roleLabel[/** @type {"owner"} */ (t.role)] ?? t.role}</span>
            <span>${t.memberCount} ${t.memberCount === 1 ? "member" : "members"}</span></p>
        </li>`
      )}</ul>`}`
}
