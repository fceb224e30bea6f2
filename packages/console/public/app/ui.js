/**
 * Small pieces every page uses: loading a Person API read, running an
 * action with its busy and error state, times, copy buttons, two-step
 * confirmations, and the page heading (which also sets the document title).
 */
import { html, useCallback, useEffect, useRef, useState } from "./html.js"
import { takeFocus } from "./router.js"

/**
 * Runs `load` now and whenever `deps` change; `reload` runs it again, `setData` replaces what it gave.
 * @template T
 * @param {() => Promise<T>} load
 * @param {unknown[]} deps
 */
export const useLoad = (load, deps) => {
  const [state, setState] = useState(/** @type {{ data: T | undefined, error: any, loading: boolean }} */ ({ data: undefined, error: null, loading: true }))
  const generation = useRef(0)
  const run = useCallback(() => {
    const mine = ++generation.current
    setState((s) => ({ ...s, loading: true }))
    return load().then(
      (data) => mine === generation.current && setState({ data, error: null, loading: false }),
      (error) => mine === generation.current && setState((s) => ({ data: s.data, error, loading: false }))
    )
  }, deps)
  useEffect(() => {
    run()
  }, [run])
  const setData = useCallback((/** @type {(data: T | undefined) => T} */ f) => setState((s) => ({ ...s, data: f(s.data) })), [])
  return { ...state, reload: run, setData }
}

/**
 * An action's runner, busy flag and last error; `run` resolves to the action's value or undefined when it failed.
 */
export const useAction = () => {
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState(/** @type {any} */ (null))
  const run = useCallback(async (/** @type {() => Promise<any>} */ action) => {
    setBusy(true)
    setError(null)
    try {
      return await action()
    } catch (e) {
      setError(e)
      return undefined
    } finally {
      setBusy(false)
    }
  }, [])
  return { run, busy, error, setError }
}

/** An error, announced to screen readers. */
export const ErrorNote = (/** @type {{ error: any }} */ { error }) =>
  error ? html`<p class="note error" role="alert">${error.message ?? String(error)}</p>` : null

export const Loading = (/** @type {{ label?: string }} */ { label = "Loading…" }) => html`<p class="muted" role="status">${label}</p>`

/** The page's heading: the document title follows it, and it takes focus after a navigation (router.js). */
export const PageHead = (/** @type {{ title: string, tab?: string, children?: any }} */ { title, tab, children }) => {
  const heading = useRef(/** @type {HTMLHeadingElement | null} */ (null))
  useEffect(() => {
    document.title = `${tab ?? title} · Herald`
  }, [title, tab])
  useEffect(() => {
    if (takeFocus()) heading.current?.focus({ preventScroll: false })
  }, [])
  return html`<div class="page-head"><h1 tabindex="-1" ref=${heading}>${title}</h1>${children}</div>`
}

const relative = new Intl.RelativeTimeFormat(undefined, { numeric: "auto" })
const absolute = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" })

/** "in 5 minutes", "3 hours ago": the nearest unit. */
export const fromNow = (/** @type {string | number | Date} */ at, now = Date.now()) => {
  const seconds = Math.round((new Date(at).getTime() - now) / 1000)
  const steps = /** @type {const} */ ([[60, "second"], [60, "minute"], [24, "hour"], [7, "day"], [4.35, "week"], [12, "month"], [Infinity, "year"]])
  let value = seconds
  for (const [size, unit] of steps) {
    if (Math.abs(value) < size) return relative.format(Math.round(value), unit)
    value /= size
  }
  return ""
}

export const formatTime = (/** @type {string | number | Date} */ at) => absolute.format(new Date(at))

/** A time: relative in the text, exact in its title and `datetime`. */
export const Time = (/** @type {{ at: string | null | undefined }} */ { at }) =>
  at ? html`<time datetime=${at} title=${formatTime(at)}>${fromNow(at)}</time>` : null

/** Re-renders every `ms` milliseconds (countdowns, relative times). */
export const useTick = (ms) => {
  const [now, setNow] = useState(Date.now())
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), ms)
    return () => clearInterval(timer)
  }, [ms])
  return now
}

/** A button that copies `text` and says so. */
export const CopyButton = (/** @type {{ text: string, label?: string }} */ { text, label = "Copy" }) => {
  const [state, setState] = useState("")
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text)
      setState("Copied")
    } catch {
      setState("Copy failed: select the text and copy it")
    }
  }
  return html`<span class="copy"><button type="button" onClick=${copy}>${label}</button><span class="muted" role="status">${state}</span></span>`
}

/**
 * A destructive action in two steps: the first press asks, the second does it.
 * @param {{ label: string, confirm?: string, onConfirm: () => any, busy?: boolean, describedBy?: string }} props
 */
export const ConfirmButton = ({ label, confirm, onConfirm, busy = false, describedBy }) => {
  const [asking, setAsking] = useState(false)
  if (!asking) {
    return html`<button type="button" class="danger" aria-describedby=${describedBy} disabled=${busy} onClick=${() => setAsking(true)}>${label}</button>`
  }
  return html`<span class="confirm" role="group" aria-label=${confirm ?? `${label}?`}>
    <button type="button" class="danger" disabled=${busy} onClick=${() => {
      setAsking(false)
      onConfirm()
    }}>${confirm ?? `Yes, ${label.toLowerCase()}`}</button>
    <button type="button" onClick=${() => setAsking(false)}>Cancel</button>
  </span>`
}

/**
 * A read of one thing by the id in the page's path: unknown, another person's, or not an id at all are
 * the same to the person.
 */
export const missing = (/** @type {any} */ error, /** @type {string} */ what) =>
  error && (error.status === 404 || (error.status === 400 && error.code === "VALIDATION_FAILED"))
    ? { message: `There is no such ${what}, or it is not yours.` }
    : error

/** Only http(s) links are ever rendered as links (a URL in a record is whatever its sender chose). */
export const safeUrl = (/** @type {unknown} */ url) => {
  if (typeof url !== "string") return undefined
  try {
    const parsed = new URL(url)
    return parsed.protocol === "https:" || parsed.protocol === "http:" ? parsed.href : undefined
  } catch {
    return undefined
  }
}

export const ExternalLink = (/** @type {{ href: unknown, children?: any }} */ { href, children }) => {
  const url = safeUrl(href)
  return url ? html`<a href=${url} rel="noopener noreferrer" target="_blank">${children ?? url}</a>` : null
}
