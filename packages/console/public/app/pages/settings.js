/**
 * The person's account: who is signed in, passkeys (made here, so later
 * sign-ins need no e-mail), the sessions signed in anywhere (each
 * revocable), and signing out.
 */
import * as api from "../api.js"
import { html, useState } from "../html.js"
import { closeLive } from "../live.js"
import { ConfirmButton, ErrorNote, Loading, PageHead, Time, useAction, useLoad } from "../ui.js"
import { createPasskey, passkeyMessage, passkeysSupported } from "../webauthn.js"
import { browserName, describeAgent } from "../push.js"

const Passkeys = () => {
  const loaded = useLoad(() => api.passkeys(), [])
  const [name, setName] = useState(browserName())
  const action = useAction()
  const add = async (/** @type {Event} */ event) => {
    event.preventDefault()
    const made = await action.run(async () => {
      const { challengeId, options } = await api.passkeyOptions()
      let response
      try {
        response = await createPasskey(options)
      } catch (e) {
        throw new Error(passkeyMessage(e))
      }
      return api.passkeyAdd({ body: { challengeId, response, name: name.trim() || undefined } })
    })
    if (made !== undefined) loaded.reload()
  }
  const remove = (/** @type {string} */ id) =>
    action.run(async () => {
      await api.passkeyRemove({ params: { id } })
      await loaded.reload()
    })
  const items = loaded.data?.items ?? []
  return html`<section aria-labelledby="passkeys" class="card">
    <h2 id="passkeys">Passkeys</h2>
    <p class="muted">Sign in with this device's screen lock or a security key instead of an e-mailed link.</p>
    <${ErrorNote} error=${loaded.error} />
    ${loaded.data === undefined
      ? loaded.loading ? html`<${Loading} />` : null
      : items.length === 0
      ? html`<p class="empty">No passkeys yet.</p>`
      : html`<ul class="plain">${items.map((/** @type {any} */ p) =>
        html`<li key=${p.id} class="row">
          <span><strong>${p.name}</strong> <span class="muted">added <${Time} at=${p.createdAt} />${p.lastUsedAt ? html`, used <${Time} at=${p.lastUsedAt} />` : ", never used"}</span></span>
          <${ConfirmButton} label="Remove" confirm=${`Yes, remove ${p.name}`} busy=${action.busy} onConfirm=${() => remove(p.id)} />
        </li>`
      )}</ul>`}
    ${passkeysSupported()
      ? html`<form onSubmit=${add} class="inline">
          <label for="passkey-name">Name</label>
          <input id="passkey-name" maxlength="100" value=${name} onInput=${(/** @type {any} */ e) => setName(e.currentTarget.value)} />
          <button type="submit" class="primary" disabled=${action.busy}>${action.busy ? "Waiting for the passkey…" : "Add a passkey"}</button>
        </form>`
      : html`<p class="muted">This browser cannot make passkeys.</p>`}
    <${ErrorNote} error=${action.error} />
  </section>`
}

const Sessions = () => {
  const loaded = useLoad(() => api.sessions(), [])
  const action = useAction()
  const revoke = (/** @type {any} */ session) =>
    action.run(async () => {
      await api.sessionRevoke({ params: { id: session.id } })
      if (session.current) location.assign("/sign-in")
      else await loaded.reload()
    })
  const items = loaded.data?.items ?? []
  return html`<section aria-labelledby="sessions" class="card">
    <h2 id="sessions">Where you are signed in</h2>
    <${ErrorNote} error=${loaded.error ?? action.error} />
    ${loaded.data === undefined
      ? loaded.loading ? html`<${Loading} />` : null
      : html`<ul class="plain">${items.map((/** @type {any} */ s) =>
        html`<li key=${s.id} class="row">
          <span><strong>${s.userAgent ? describeAgent(s.userAgent) : "The command line or a script"}</strong>${s.current && html` <span class="badge">this browser</span>`}
            <span class="muted"> signed in <${Time} at=${s.createdAt} />${s.lastUsedAt && html`, active <${Time} at=${s.lastUsedAt} />`}</span></span>
          <${ConfirmButton} label=${s.current ? "Sign out" : "Revoke"} confirm=${s.current ? "Yes, sign out" : "Yes, revoke"} busy=${action.busy} onConfirm=${() => revoke(s)} />
        </li>`
      )}</ul>`}
  </section>`
}

export default function Settings(/** @type {{ me: any }} */ { me }) {
  const action = useAction()
  const signOut = async () => {
    const done = await action.run(() => api.signOut())
    if (done !== undefined) {
      closeLive()
      location.assign("/sign-in")
    }
  }
  return html`<${PageHead} title="Settings" />
    <section aria-labelledby="account" class="card">
      <h2 id="account">Account</h2>
      <p><strong>${me.name}</strong> <span class="muted">${me.email}</span></p>
      <button type="button" onClick=${signOut} disabled=${action.busy}>Sign out</button>
      <${ErrorNote} error=${action.error} />
    </section>
    <${Passkeys} />
    <${Sessions} />`
}
