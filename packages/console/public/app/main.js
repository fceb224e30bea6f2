/**
 * The console's entry: who is signed in (GET /api/app/me; a 401 sends the
 * person to /sign-in, coming back afterwards), the frame of every page
 * (skip link, header, navigation, main landmark), and the page of the path.
 */
import * as api from "./api.js"
import { html, render, useEffect, useState } from "./html.js"
import { closeLive } from "./live.js"
import { goNext, match, navigate, navigation, peekNext, rememberNext, startRouter, takeNext, useLocation } from "./router.js"
import { ErrorNote, Loading } from "./ui.js"

/** Loads the page module of a route, once; the page is its default export. */
const Page = (/** @type {{ route: import("./router.js").Route, params: Record<string, string>, me: any }} */ { route, params, me }) => {
  const [loaded, setLoaded] = useState(/** @type {{ pattern: string, component: any } | { error: any } | null} */ (null))
  useEffect(() => {
    let current = true
    route.load().then(
      (module) => current && setLoaded({ pattern: route.pattern, component: module.default }),
      (error) => current && setLoaded({ error })
    )
    return () => void (current = false)
  }, [route.pattern])
  if (loaded === null) return html`<${Loading} />`
  if ("error" in loaded) return html`<${ErrorNote} error=${{ message: "This page could not be loaded. Reload to try again." }} />`
  if (loaded.pattern !== route.pattern) return html`<${Loading} />`
  const Component = loaded.component
  // A page of another item is a new page: no state carried over from the last one.
  return html`<${Component} key=${JSON.stringify(params)} params=${params} me=${me} />`
}

const Header = (/** @type {{ active: string | undefined }} */ { active }) =>
  html`<header class="top">
    <a class="brand" href="/inbox"><img src="/console/icons/icon.svg" alt="" width="28" height="28" /> Herald</a>
    <nav aria-label="Main">
      <ul>
        ${navigation.map(([label, path]) =>
          html`<li><a href=${path} aria-current=${label === active ? "page" : undefined}>${label}</a></li>`
        )}
      </ul>
    </nav>
  </header>`

const NotFound = () => html`<h1 tabindex="-1">No such page</h1><p><a href="/inbox">Go to the inbox</a></p>`

const App = () => {
  const location = useLocation()
  // undefined: asking; null: signed out.
  const [me, setMe] = useState(/** @type {any} */ (undefined))
  const [bootError, setBootError] = useState(/** @type {any} */ (null))

  useEffect(() => {
    api.whenSignedOut(() => {
      closeLive()
      setMe(null)
    })
    api.me().then(setMe, (error) => (error.status === 401 ? setMe(null) : setBootError(error)))
  }, [])

  const matched = match(location.pathname)
  const isPublic = matched?.route.public === true

  useEffect(() => {
    if (me === undefined) return
    // `/sign-in?next=/oauth/authorize?…`: the consent page sent a signed-out person here and wants them back.
    const asked = location.pathname === "/sign-in" ? new URLSearchParams(location.search).get("next") : null
    if (asked !== null) rememberNext(asked)
    if (me === null && !isPublic) {
      rememberNext(location.pathname + location.search)
      navigate("/sign-in", { replace: true })
    } else if (me !== null && (location.pathname === "/" || location.pathname === "/sign-in")) {
      goNext(takeNext() ?? "/inbox")
    } else if (me !== null && peekNext() === location.pathname + location.search) {
      takeNext() // arrived where the sign-in was for (the e-mailed link's `next`)
    }
  }, [me, location.pathname])

  if (bootError) {
    return html`<main id="main" class="narrow"><h1>Herald</h1><${ErrorNote} error=${bootError} /><p><button type="button" onClick=${() => location.reload()}>Try again</button></p></main>`
  }
  if (me === undefined || (me === null && !isPublic)) return html`<main id="main"><${Loading} /></main>`
  const content = matched === undefined ? html`<${NotFound} />` : html`<${Page} route=${matched.route} params=${matched.params} me=${me} />`
  if (isPublic) {
    return html`<main id="main" class="narrow">
      <p class="brand"><img src="/console/icons/icon.svg" alt="" width="40" height="40" /> Herald</p>
      ${content}
    </main>`
  }
  return html`<a class="skip" href="#main">Skip to content</a>
    <${Header} active=${matched?.route.nav} />
    <main id="main" tabindex="-1">${content}</main>`
}

startRouter()
if ("serviceWorker" in navigator) {
  // The worker shows pushes and answers their buttons even with no console tab open (sw.js).
  navigator.serviceWorker.register("/sw.js", { scope: "/" }).catch(() => {})
}
const root = /** @type {HTMLElement} */ (document.getElementById("app"))
root.textContent = ""
render(html`<${App} />`, root)
