/**
 * The console's router on the History API: the same paths the server answers
 * with the shell (server console/ConsoleRoutes.ts), each drawn by one page
 * module loaded when first visited. Same-origin links to a console path are
 * followed without a page load; any other link is left to the browser.
 */
import { useEffect, useState } from "./html.js"

/**
 * @typedef {{ pattern: string, load: () => Promise<{ default: any }>, public?: boolean, nav?: string }} Route
 * @type {Route[]}
 */
export const routes = [
  { pattern: "/sign-in", load: () => import("./pages/signIn.js"), public: true },
  { pattern: "/inbox", load: () => import("./pages/inbox.js"), nav: "Inbox" },
  { pattern: "/inbox/:id", load: () => import("./pages/item.js"), nav: "Inbox" },
  { pattern: "/prompts/:id", load: () => import("./pages/prompt.js"), nav: "Inbox" },
  { pattern: "/activities", load: () => import("./pages/activities.js"), nav: "Activities" },
  { pattern: "/oncall", load: () => import("./pages/oncall.js"), nav: "On-call" },
  { pattern: "/teams", load: () => import("./pages/teams.js"), nav: "Teams" },
  { pattern: "/teams/:id", load: () => import("./pages/team.js"), nav: "Teams" },
  { pattern: "/join/:code", load: () => import("./pages/join.js"), nav: "Teams" },
  { pattern: "/apps", load: () => import("./pages/apps.js"), nav: "Apps" },
  { pattern: "/mini-apps/:packageId/install", load: () => import("./pages/miniApp.js"), nav: "Apps" },
  { pattern: "/devices", load: () => import("./pages/devices.js"), nav: "Devices" },
  { pattern: "/tokens", load: () => import("./pages/tokens.js"), nav: "Tokens" },
  { pattern: "/quiet-hours", load: () => import("./pages/quiet.js"), nav: "Quiet hours" },
  { pattern: "/email", load: () => import("./pages/email.js"), nav: "E-mail" },
  { pattern: "/settings", load: () => import("./pages/settings.js"), nav: "Settings" }
]

/** The main navigation, in order: label and path. */
export const navigation = [
  ["Inbox", "/inbox"],
  ["Activities", "/activities"],
  ["On-call", "/oncall"],
  ["Teams", "/teams"],
  ["Apps", "/apps"],
  ["Devices", "/devices"],
  ["Tokens", "/tokens"],
  ["Quiet hours", "/quiet-hours"],
  ["E-mail", "/email"],
  ["Settings", "/settings"]
]

/**
 * The route of a path and its parameters (decoded), or undefined.
 * @param {string} pathname
 * @returns {{ route: Route, params: Record<string, string> } | undefined}
 */
export const match = (pathname) => {
  const segments = pathname.replace(/\/+$/, "").split("/")
  for (const route of routes) {
    const parts = route.pattern.split("/")
    if (parts.length !== segments.length) continue
    /** @type {Record<string, string>} */
    const params = {}
    let ok = true
    for (let i = 0; i < parts.length && ok; i++) {
      const part = /** @type {string} */ (parts[i])
      const segment = /** @type {string} */ (segments[i])
      if (part.startsWith(":")) {
        try {
          params[part.slice(1)] = decodeURIComponent(segment)
        } catch {
          ok = false
        }
        ok &&= segment !== ""
      } else {
        ok = part === segment
      }
    }
    if (ok) return { route, params }
  }
  return undefined
}

/** @type {Set<() => void>} */
const listeners = new Set()
let focusPending = false
const notify = () => {
  focusPending = true
  listeners.forEach((listener) => listener())
}

/** True once after each navigation: the new page's heading then takes focus, so screen readers announce it (ui.js PageHead). */
export const takeFocus = () => {
  const pending = focusPending
  focusPending = false
  return pending
}

/**
 * Goes to a console path.
 * @param {string} to
 * @param {{ replace?: boolean }} [options]
 */
export const navigate = (to, options = {}) => {
  if (to === location.pathname + location.search) return
  if (options.replace) history.replaceState(null, "", to)
  else history.pushState(null, "", to)
  notify()
}

/** The current location; the component re-renders when it changes. */
export const useLocation = () => {
  const [, setTick] = useState(0)
  useEffect(() => {
    const listener = () => setTick((n) => n + 1)
    listeners.add(listener)
    return () => void listeners.delete(listener)
  }, [])
  return { pathname: location.pathname, search: location.search }
}

/** Starts following history and intercepting same-origin links to console paths. */
export const startRouter = () => {
  addEventListener("popstate", notify)
  document.addEventListener("click", (event) => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return
    const anchor = /** @type {Element | null} */ (event.target instanceof Element ? event.target.closest("a[href]") : null)
    if (!(anchor instanceof HTMLAnchorElement) || anchor.target !== "" || anchor.hasAttribute("download")) return
    const url = new URL(anchor.href)
    if (url.origin !== location.origin || (url.pathname !== "/" && match(url.pathname) === undefined)) return
    // A link within this page (the skip link's #main) is the browser's to follow.
    if (url.hash !== "" && url.pathname === location.pathname && url.search === location.search) return
    event.preventDefault()
    navigate(url.pathname + url.search)
  })
}

/** Where to go once signed in: the page that asked for sign-in (kept across tabs: an e-mailed link opens a new one). */
const NEXT_KEY = "herald.next"

/** @param {string} path */
export const rememberNext = (path) => {
  const page = path.split("?")[0] ?? ""
  // A console page, or an OAuth authorization that sent the person here to sign in first.
  if (path !== "/" && path !== "/sign-in" && (match(page) !== undefined || page === "/oauth/authorize")) {
    localStorage.setItem(NEXT_KEY, JSON.stringify({ path, at: Date.now() }))
  }
}

/** Goes to `path` once signed in: a console page in place, a server page (the OAuth consent page) by loading it. */
export const goNext = (/** @type {string} */ path) => {
  if (path.startsWith("/oauth/")) location.assign(path)
  else navigate(path, { replace: true })
}

/** The remembered page (within the hour), once. */
export const takeNext = () => {
  const next = peekNext()
  localStorage.removeItem(NEXT_KEY)
  return next
}

/** The remembered page (within the hour), kept. */
export const peekNext = () => {
  const raw = localStorage.getItem(NEXT_KEY)
  try {
    const { path, at } = JSON.parse(raw ?? "null") ?? {}
    return typeof path === "string" && path.startsWith("/") && !path.startsWith("//") && Date.now() - at < 3_600_000 ? path : undefined
  } catch {
    return undefined
  }
}
