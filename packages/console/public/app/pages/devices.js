/**
 * Devices: "Notify this browser" (permission, service worker, push
 * subscription, a device of platform `web`: push.js), and every device of
 * the person — browsers and phones — to rename or remove.
 */
import * as api from "../api.js"
import { html, useState } from "../html.js"
import { browserName, disableThisBrowser, enableThisBrowser, permission, pushSupported, thisDeviceId } from "../push.js"
import { ConfirmButton, ErrorNote, Loading, PageHead, Time, useAction, useLoad } from "../ui.js"

const platformLabel = { web: "Browser", ios: "iPhone", android: "Android" }

const ThisBrowser = (/** @type {{ devices: any[], onChange: () => void }} */ { devices, onChange }) => {
  const action = useAction()
  const [, rerender] = useState(0)
  const id = thisDeviceId()
  const mine = devices.find((d) => d.id === id && d.active)
  const state = permission()
  const enable = async () => {
    await action.run(() => enableThisBrowser(browserName()))
    rerender((n) => n + 1)
    onChange()
  }
  const disable = async () => {
    await action.run(disableThisBrowser)
    rerender((n) => n + 1)
    onChange()
  }
  let body
  if (!pushSupported()) {
    body = html`<p>This browser cannot receive push notifications${/iPhone|iPad/.test(navigator.userAgent) ? ": on an iPhone, add Herald to the home screen first (Share → Add to Home Screen), then open it from there" : ""}.</p>`
  } else if (mine && state === "granted") {
    body = html`<p class="note ok">This browser is notified, as <strong>${mine.deviceName ?? "this browser"}</strong>.</p>
      <div class="toolbar">
        <button type="button" onClick=${enable} disabled=${action.busy}>Renew the subscription</button>
        <${ConfirmButton} label="Stop notifying this browser" confirm="Yes, stop" busy=${action.busy} onConfirm=${disable} />
      </div>`
  } else if (state === "denied") {
    body = html`<p class="note warn">Notifications are blocked for this site. Allow them in the browser's site settings, then come back.</p>`
  } else {
    body = html`<p>Get a notification here when an agent notifies or asks you, with Approve and Deny right on it.</p>
      <button type="button" class="primary" onClick=${enable} disabled=${action.busy}>${action.busy ? "Asking…" : "Notify this browser"}</button>`
  }
  return html`<section aria-labelledby="this-browser" class="card">
    <h2 id="this-browser">This browser</h2>
    ${body}
    <${ErrorNote} error=${action.error} />
  </section>`
}

const DeviceRow = (/** @type {{ device: any, onChange: () => void }} */ { device, onChange }) => {
  const [editing, setEditing] = useState(false)
  const [name, setName] = useState(device.deviceName ?? "")
  const action = useAction()
  const rename = async (/** @type {Event} */ event) => {
    event.preventDefault()
    const done = await action.run(() => api.deviceRename({ params: { id: device.id }, body: { deviceName: name.trim() } }))
    if (done !== undefined) {
      setEditing(false)
      onChange()
    }
  }
  const remove = async () => {
    const done = await action.run(() => api.deviceRemove({ params: { id: device.id } }))
    if (done !== undefined) onChange()
  }
  const label = device.deviceName ?? platformLabel[/** @type {keyof typeof platformLabel} */ (device.platform)] ?? device.platform
  const inputId = `name-${device.id}`
  return html`<li class="card">
    ${editing
      ? html`<form onSubmit=${rename} class="inline">
          <label for=${inputId}>Name</label>
          <input id=${inputId} value=${name} maxlength="100" required onInput=${(/** @type {any} */ e) => setName(e.currentTarget.value)} />
          <button type="submit" class="primary" disabled=${action.busy}>Save</button>
          <button type="button" onClick=${() => setEditing(false)}>Cancel</button>
        </form>`
      : html`<h3>${label}${device.id === thisDeviceId() && html` <span class="badge">this browser</span>`}</h3>`}
    <p class="item-meta">
      <span class="badge">${platformLabel[/** @type {keyof typeof platformLabel} */ (device.platform)] ?? device.platform}</span>
      <span>${device.active ? "Active" : "Inactive"}</span>
      <span>Last seen <${Time} at=${device.lastSeenAt} /></span>
    </p>
    ${!editing && html`<div class="toolbar">
      <button type="button" onClick=${() => setEditing(true)} aria-label=${`Rename ${label}`}>Rename</button>
      <${ConfirmButton} label="Remove" confirm=${`Yes, remove ${label}`} busy=${action.busy} onConfirm=${remove} />
    </div>`}
    <${ErrorNote} error=${action.error} />
  </li>`
}

export default function Devices() {
  const loaded = useLoad(() => api.devices(), [])
  const devices = loaded.data?.items ?? []
  return html`<${PageHead} title="Devices" />
    <${ThisBrowser} devices=${devices} onChange=${() => loaded.reload()} />
    <h2>All your devices</h2>
    <${ErrorNote} error=${loaded.error} />
    ${loaded.data === undefined
      ? loaded.loading ? html`<${Loading} />` : null
      : devices.length === 0
      ? html`<p class="empty">No devices yet.</p>`
      : html`<ul class="cards">${devices.map((d) => html`<${DeviceRow} key=${d.id} device=${d} onChange=${() => loaded.reload()} />`)}</ul>`}`
}
