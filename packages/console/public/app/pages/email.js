/**
 * The e-mail channel: whether prompts still waiting after a while, and pages
 * when no phone can take them, are mailed — with links that answer — to the
 * account's address, once the person confirmed it (docs/email.md).
 */
import * as api from "../api.js"
import { html, useEffect, useState } from "../html.js"
import { ErrorNote, Loading, PageHead, Time, useAction, useLoad } from "../ui.js"

const Status = (/** @type {{ channel: any }} */ { channel }) =>
  html`<section aria-labelledby="email-status" class="card">
    <h2 id="email-status">Status</h2>
    <p>Mail goes to <strong>${channel.address}</strong>, your account's address.</p>
    ${!channel.mailConfigured
      ? html`<p class="note warn" role="status">This Herald server sends no mail (its operator has not set up SMTP), so the channel cannot be turned on.</p>`
      : !channel.enabled
      ? html`<p class="note" role="status">Off: nothing is mailed.</p>`
      : channel.verified
      ? html`<p class="note ok" role="status">On, and your address is confirmed.</p>`
      : html`<p class="note warn" role="status">On, but your address is not confirmed yet: open the link we mailed
          ${channel.verificationSentAt ? html` (<${Time} at=${channel.verificationSentAt} />)` : null}. Nothing else is mailed until then.</p>`}
    <p class="muted small">${channel.mailsSent} mail${channel.mailsSent === 1 ? "" : "s"} sent${channel.lastMailAt ? html`, the last <${Time} at=${channel.lastMailAt} />` : null}.</p>
  </section>`

const Settings = (/** @type {{ channel: any, onChange: (c: any) => void }} */ { channel, onChange }) => {
  const [enabled, setEnabled] = useState(channel.enabled)
  const [prompts, setPrompts] = useState(channel.promptAfterSeconds !== null)
  const [minutes, setMinutes] = useState(String(Math.round((channel.promptAfterSeconds ?? 900) / 60)))
  const [pages, setPages] = useState(channel.pages)
  const [saved, setSaved] = useState(false)
  const action = useAction()
  useEffect(() => setSaved(false), [enabled, prompts, minutes, pages])
  const save = async (/** @type {Event} */ event) => {
    event.preventDefault()
    const body = { enabled, promptAfterSeconds: prompts ? Number(minutes) * 60 : null, pages }
    const done = await action.run(() => api.emailChannelSet({ body }))
    if (done !== undefined) {
      setSaved(true)
      onChange(done)
    }
  }
  return html`<section aria-labelledby="email-settings" class="card">
    <h2 id="email-settings">Settings</h2>
    <form onSubmit=${save}>
      <label class="check"><input type="checkbox" checked=${enabled} disabled=${!channel.mailConfigured}
        onChange=${() => setEnabled(!enabled)} /> Use e-mail when my phone is not enough</label>
      <fieldset>
        <legend>Prompts</legend>
        <label class="check"><input type="checkbox" checked=${prompts} onChange=${() => setPrompts(!prompts)} />
          Mail me any prompt still waiting after</label>
        <label for="email-minutes" class="check"><input id="email-minutes" type="number" min="1" max="10080" step="1" required
          disabled=${!prompts} value=${minutes} onInput=${(/** @type {any} */ e) => setMinutes(e.currentTarget.value)} /> minutes</label>
        <p class="muted small">An agent may also ask for it on a single prompt. Each mail has one link per answer; a link opens a page where you confirm.</p>
      </fieldset>
      <fieldset>
        <legend>Pages</legend>
        <label class="check"><input type="checkbox" checked=${pages} onChange=${() => setPages(!pages)} />
          Mail me a page when none of my devices can take it, with a link to acknowledge</label>
      </fieldset>
      <div class="toolbar">
        <button type="submit" class="primary push-right" disabled=${action.busy}>${action.busy ? "Saving…" : "Save"}</button>
      </div>
      ${saved && html`<p class="note ok" role="status">Saved.${enabled && !channel.verified ? " Check your mail to confirm the address." : ""}</p>`}
      <${ErrorNote} error=${action.error} />
    </form>
  </section>`
}

export default function Email() {
  const loaded = useLoad(() => api.emailChannel(), [])
  const channel = loaded.data
  return html`<${PageHead} title="E-mail" />
    <${ErrorNote} error=${loaded.error} />
    ${channel === undefined
      ? loaded.loading ? html`<${Loading} />` : null
      : html`<${Status} channel=${channel} />
        <${Settings} channel=${channel} onChange=${(/** @type {any} */ c) => loaded.setData(() => c)} />`}`
}
