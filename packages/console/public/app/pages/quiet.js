/**
 * Quiet hours: whether they are in effect now (and until when, and how many
 * pushes are held), "mute for N hours" and unmute, and the weekly schedule —
 * time zone (the browser's by default), windows, and what routine pushes do
 * meanwhile (silent or held). Pages, urgent prompts and critical pushes break
 * through whatever is set here (docs/quiet-hours.md).
 */
import * as api from "../api.js"
import { html, useEffect, useState } from "../html.js"
import { ErrorNote, Loading, PageHead, Time, useAction, useLoad } from "../ui.js"

const DAYS = [["mon", "Mon"], ["tue", "Tue"], ["wed", "Wed"], ["thu", "Thu"], ["fri", "Fri"], ["sat", "Sat"], ["sun", "Sun"]]
const browserZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC"
const clock = new Intl.DateTimeFormat(undefined, { weekday: "short", hour: "2-digit", minute: "2-digit" })
/** The weekday and time of an instant, in the browser's zone. */
const Clock = (/** @type {{ at: string }} */ { at }) => html`<span>${clock.format(new Date(at))}</span>`
const newWindow = () => ({ days: DAYS.map(([d]) => d), start: "22:00", end: "07:00" })

const Now = (/** @type {{ settings: any }} */ { settings }) => {
  const c = settings.current
  return html`<section aria-labelledby="quiet-now" class="card">
    <h2 id="quiet-now">Now</h2>
    ${c.quiet
      ? html`<p class="note warn" role="status"><strong>Quiet</strong> ${c.reason === "mute" ? "(muted)" : "(schedule)"}, ending <${Time} at=${c.until} /> (<${Clock} at=${c.until} />).
          Routine pushes are ${settings.mode === "hold" ? "held" : "silent"}.</p>`
      : html`<p class="note ok" role="status">Not quiet: pushes arrive as usual.</p>`}
    ${c.held > 0 && html`<p>${c.held} item${c.held === 1 ? "" : "s"} held; one summary comes when the quiet ends.</p>`}
    <p class="muted small">Pages, urgent prompts and critical pushes always come through.</p>
  </section>`
}

const Mute = (/** @type {{ settings: any, onChange: (s: any) => void }} */ { settings, onChange }) => {
  const [hours, setHours] = useState("1")
  const action = useAction()
  const mute = async (/** @type {Event} */ event) => {
    event.preventDefault()
    const done = await action.run(() => api.quietMute({ body: { hours: Number(hours) } }))
    if (done !== undefined) onChange(done)
  }
  const unmute = async () => {
    const done = await action.run(() => api.quietUnmute())
    if (done !== undefined) onChange(done)
  }
  return html`<section aria-labelledby="quiet-mute" class="card">
    <h2 id="quiet-mute">Mute</h2>
    ${settings.mutedUntil
      ? html`<div class="toolbar"><span>Muted, ending <${Time} at=${settings.mutedUntil} /> (<${Clock} at=${settings.mutedUntil} />).</span>
          <button type="button" onClick=${unmute} disabled=${action.busy}>Unmute</button></div>`
      : null}
    <form onSubmit=${mute} class="inline">
      <label for="mute-hours">Mute for (hours, 1–168)</label>
      <input id="mute-hours" type="number" min="1" max="168" step="1" required value=${hours}
        onInput=${(/** @type {any} */ e) => setHours(e.currentTarget.value)} />
      <button type="submit" class="primary" disabled=${action.busy}>${settings.mutedUntil ? "Mute again" : "Mute"}</button>
    </form>
    <${ErrorNote} error=${action.error} />
  </section>`
}

const WindowRow = (/** @type {{ index: number, window: any, onChange: (w: any) => void, onRemove: () => void }} */ { index, window, onChange, onRemove }) => {
  const toggle = (/** @type {string} */ day) =>
    onChange({ ...window, days: window.days.includes(day) ? window.days.filter((/** @type {string} */ d) => d !== day) : [...window.days, day] })
  return html`<fieldset>
    <legend>Window ${index + 1}</legend>
    <div class="toolbar">${DAYS.map(([day, label]) =>
      html`<label key=${day} class="check"><input type="checkbox" checked=${window.days.includes(day)} onChange=${() => toggle(day)} /> ${label}</label>`
    )}</div>
    <div class="toolbar">
      <label for=${`start-${index}`} class="check">From <input id=${`start-${index}`} type="time" required value=${window.start}
        onInput=${(/** @type {any} */ e) => onChange({ ...window, start: e.currentTarget.value })} /></label>
      <label for=${`end-${index}`} class="check">to <input id=${`end-${index}`} type="time" required value=${window.end === "24:00" ? "00:00" : window.end}
        onInput=${(/** @type {any} */ e) => onChange({ ...window, end: e.currentTarget.value })} /></label>
      <button type="button" class="danger push-right" onClick=${onRemove}>Remove</button>
    </div>
    <p class="muted small">An end not after the start is on the next day; the same start and end is the whole day.</p>
  </fieldset>`
}

const Schedule = (/** @type {{ settings: any, onChange: (s: any) => void }} */ { settings, onChange }) => {
  // Never set: offer the browser's zone and a 22:00–07:00 night.
  const fresh = !settings.enabled && settings.windows.length === 0
  const [enabled, setEnabled] = useState(fresh ? true : settings.enabled)
  const [timeZone, setTimeZone] = useState(fresh ? browserZone() : settings.timeZone)
  const [mode, setMode] = useState(settings.mode)
  const [windows, setWindows] = useState(fresh ? [newWindow()] : settings.windows)
  const [saved, setSaved] = useState(false)
  const action = useAction()
  useEffect(() => setSaved(false), [enabled, timeZone, mode, windows])
  const save = async (/** @type {Event} */ event) => {
    event.preventDefault()
    const done = await action.run(() => api.quietSet({ body: { enabled, timeZone: timeZone.trim(), windows, mode } }))
    if (done !== undefined) {
      setSaved(true)
      onChange(done)
    }
  }
  return html`<section aria-labelledby="quiet-schedule" class="card">
    <h2 id="quiet-schedule">Weekly schedule</h2>
    <form onSubmit=${save}>
      <label class="check"><input type="checkbox" checked=${enabled} onChange=${() => setEnabled(!enabled)} /> Use this schedule</label>
      <label for="quiet-zone">Time zone</label>
      <input id="quiet-zone" maxlength="64" required value=${timeZone} onInput=${(/** @type {any} */ e) => setTimeZone(e.currentTarget.value)}
        aria-describedby="quiet-zone-hint" />
      <p id="quiet-zone-hint" class="muted small">An IANA name such as Europe/Berlin; this browser is in ${browserZone()}.</p>
      <fieldset>
        <legend>During quiet hours, routine pushes are</legend>
        <label class="check"><input type="radio" name="quiet-mode" checked=${mode === "silent"} onChange=${() => setMode("silent")} /> delivered silently (no sound)</label>
        <label class="check"><input type="radio" name="quiet-mode" checked=${mode === "hold"} onChange=${() => setMode("hold")} /> held, then summarised in one push when the quiet ends</label>
      </fieldset>
      ${windows.length === 0 ? html`<p class="empty">No windows: only a mute makes it quiet.</p>` : null}
      ${windows.map((/** @type {any} */ w, /** @type {number} */ i) =>
        html`<${WindowRow} key=${i} index=${i} window=${w}
          onChange=${(/** @type {any} */ next) => setWindows(windows.map((/** @type {any} */ x, /** @type {number} */ j) => j === i ? next : x))}
          onRemove=${() => setWindows(windows.filter((/** @type {any} */ _, /** @type {number} */ j) => j !== i))} />`
      )}
      <div class="toolbar">
        <button type="button" onClick=${() => setWindows([...windows, newWindow()])} disabled=${windows.length >= 14}>Add a window</button>
        <button type="submit" class="primary push-right" disabled=${action.busy}>${action.busy ? "Saving…" : "Save"}</button>
      </div>
      ${saved && html`<p class="note ok" role="status">Saved.</p>`}
      <${ErrorNote} error=${action.error} />
    </form>
  </section>`
}

export default function QuietHours() {
  const loaded = useLoad(() => api.quietHours(), [])
  const settings = loaded.data
  return html`<${PageHead} title="Quiet hours" />
    <${ErrorNote} error=${loaded.error} />
    ${settings === undefined
      ? loaded.loading ? html`<${Loading} />` : null
      : html`<${Now} settings=${settings} />
        <${Mute} settings=${settings} onChange=${(/** @type {any} */ s) => loaded.setData(() => s)} />
        <${Schedule} settings=${settings} onChange=${(/** @type {any} */ s) => loaded.setData(() => s)} />`}`
}
