/**
 * Web apps the person can sign in to with Herald: approving sign-in
 * (consent) and what each may learn (name, e-mail).
 */
import * as api from "../api.js"
import { html } from "../html.js"
import { ErrorNote, ExternalLink, Loading, PageHead, Time, useAction, useLoad } from "../ui.js"

const AppCard = (/** @type {{ app: any, onChange: (app: any) => void }} */ { app, onChange }) => {
  const action = useAction()
  const consent = () => action.run(async () => onChange(await api.appConsent({ params: { id: app.id } })))
  const share = (/** @type {"shareName" | "shareEmail"} */ field, /** @type {boolean} */ value) =>
    action.run(async () => onChange(await api.appPreferences({ params: { id: app.id }, body: { [field]: value } })))
  return html`<li class="card">
    <h2 class="h3">${app.name}</h2>
    <p class="item-meta"><${ExternalLink} href=${app.url ?? app.origin}>${app.origin}</${ExternalLink}>
      ${app.team && html`<span>shared by ${app.team.name}</span>`}</p>
    ${app.consentedAt
      ? html`<p class="muted">Sign-in approved <${Time} at=${app.consentedAt} />.</p>`
      : html`<p><button type="button" class="primary" onClick=${consent} disabled=${action.busy}>Allow sign-in</button></p>`}
    <fieldset>
      <legend>It may learn</legend>
      <label class="check"><input type="checkbox" checked=${app.shareName} disabled=${action.busy}
        onChange=${(/** @type {any} */ e) => share("shareName", e.currentTarget.checked)} /> your name</label>
      <label class="check"><input type="checkbox" checked=${app.shareEmail} disabled=${action.busy}
        onChange=${(/** @type {any} */ e) => share("shareEmail", e.currentTarget.checked)} /> your e-mail address</label>
    </fieldset>
    <${ErrorNote} error=${action.error} />
  </li>`
}

export default function Apps() {
  const loaded = useLoad(() => api.apps(), [])
  const items = loaded.data?.items ?? []
  const replace = (/** @type {any} */ app) => loaded.setData((d) => ({ ...d, items: (d?.items ?? []).map((/** @type {any} */ a) => (a.id === app.id ? app : a)) }))
  return html`<${PageHead} title="Apps" />
    <${ErrorNote} error=${loaded.error} />
    ${loaded.data === undefined
      ? loaded.loading ? html`<${Loading} />` : null
      : items.length === 0
      ? html`<p class="empty">No apps yet.</p>`
      : html`<ul class="cards">${items.map((/** @type {any} */ a) => html`<${AppCard} key=${a.id} app=${a} onChange=${replace} />`)}</ul>`}`
}
