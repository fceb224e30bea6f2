/**
 * Herald's service worker (scope `/`): shows each Web Push Herald sends as a
 * notification, and answers a prompt from the notification's buttons
 * without opening a page. The payloads (issue 32 contract, decrypted by the
 * browser):
 *
 * - `{"v":1,"type":"alert","tag","title","body","url","ref","priority","interaction","data"}`:
 *   a notification; a prompt of kind approval or yes_no gets its two
 *   buttons (reply and choice prompts open the prompt page);
 * - `{"v":1,"type":"close","tag"}`: closes what is shown with that tag
 *   (withdrawn, answered elsewhere, expired, page resolved);
 * - `{"v":1,"type":"card","tag","title","body","data"}`: a live activity's
 *   latest state, replacing the last one quietly.
 *
 * A button POSTs /api/app/interactions/{id}/answer with the session cookie
 * and `X-Herald-CSRF` (which only same-origin code can send). A plain click
 * focuses a console tab, or opens one, on the item.
 */

const ICON = "/console/icons/icon-192.png"
const BADGE = "/console/icons/badge-96.png"

/** The two buttons of a prompt kind: [action (the answer's status), title]. */
const BUTTONS = {
  approval: [["approved", "Approve"], ["denied", "Deny"]],
  yes_no: [["yes", "Yes"], ["no", "No"]]
}

const ANSWERED = { approved: "Approved", denied: "Denied", yes: "Yes", no: "No" }

self.addEventListener("install", () => self.skipWaiting())
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()))

/** The console page of an item: a prompt's page, or the inbox item a `ref` names. */
const pageOf = (payload) => {
  if (payload.interaction?.id) return `/prompts/${encodeURIComponent(payload.interaction.id)}`
  if (typeof payload.ref === "string" && payload.ref.includes(":")) return `/inbox/${encodeURIComponent(payload.ref)}`
  if (payload.type === "card") return "/activities"
  return "/inbox"
}

const read = (event) => {
  try {
    return event.data ? event.data.json() : null
  } catch {
    return null
  }
}

const closeTagged = async (tag) => {
  const shown = await self.registration.getNotifications({ tag })
  for (const notification of shown) notification.close()
}

/** An alert sent quietly (quiet hours, mode `silent`: `interruptionLevel: passive`). */
const passive = (payload) => payload.data?.interruptionLevel === "passive"

const show = (payload) => {
  const kind = payload.interaction?.kind
  const buttons = BUTTONS[kind] ?? []
  const max = self.Notification?.maxActions ?? 2
  return self.registration.showNotification(payload.title || "Herald", {
    body: payload.body ?? "",
    tag: payload.tag,
    icon: ICON,
    badge: BADGE,
    renotify: payload.type !== "card" && Boolean(payload.tag) && !passive(payload),
    // A card's update, or an alert during the person's quiet hours (mode silent), makes no sound.
    silent: payload.type === "card" || passive(payload),
    requireInteraction: buttons.length > 0 && payload.priority === "high",
    timestamp: Date.now(),
    actions: buttons.slice(0, max).map(([action, title]) => ({ action, title })),
    data: { page: pageOf(payload), interaction: payload.interaction ?? null, tag: payload.tag ?? null }
  })
}

self.addEventListener("push", (event) => {
  const payload = read(event)
  if (payload === null || payload.v !== 1) {
    // A push must show something (userVisibleOnly): a payload this worker does not know still says Herald has news.
    event.waitUntil(self.registration.showNotification("Herald", { body: "Something new in your inbox.", icon: ICON, data: { page: "/inbox" } }))
    return
  }
  if (payload.type === "close") {
    event.waitUntil(closeTagged(payload.tag))
    return
  }
  event.waitUntil(show(payload))
})

/** Answers a prompt from a notification button; the result replaces the notification (briefly, then it goes). */
const answer = async (notification, status) => {
  const { interaction, page, tag } = notification.data ?? {}
  notification.close()
  let title
  let body = notification.title
  try {
    const response = await fetch(`/api/app/interactions/${encodeURIComponent(interaction.id)}/answer`, {
      method: "POST",
      credentials: "same-origin",
      headers: { "content-type": "application/json", "x-herald-csrf": "1", "accept": "application/json" },
      body: JSON.stringify({ status })
    })
    if (response.ok) {
      title = `${ANSWERED[status] ?? "Answered"}: sent`
    } else if (response.status === 409) {
      title = "Already answered or expired"
    } else if (response.status === 401) {
      title = "Sign in to answer"
      body = "Open Herald in this browser and sign in, then answer."
    } else {
      const error = await response.json().catch(() => null)
      title = "The answer was not sent"
      body = error?.error ?? `Herald answered ${response.status}.`
    }
  } catch {
    title = "The answer was not sent"
    body = "Herald could not be reached. Open the prompt to answer."
  }
  await self.registration.showNotification(title, { body, tag: tag ?? undefined, icon: ICON, badge: BADGE, silent: true, data: { page } })
}

/** Focuses a console tab on `page`, or opens one. */
const open = async (page) => {
  const url = new URL(page, self.location.origin).href
  const tabs = await self.clients.matchAll({ type: "window", includeUncontrolled: true })
  const same = tabs.find((tab) => tab.url === url)
  if (same) return same.focus()
  // Only a tab this worker controls can be sent elsewhere; otherwise a new one opens.
  const other = tabs.find((tab) => new URL(tab.url).origin === self.location.origin && "navigate" in tab)
  if (other) {
    try {
      const moved = await other.navigate(url)
      if (moved) return moved.focus()
    } catch {
      // not controlled by this worker
    }
  }
  return self.clients.openWindow(url)
}

/**
 * What a click on a notification does: a button (`action`, the answer's
 * status) answers its prompt where it is; a plain click (no action) opens the
 * item. A function declaration, so it is also reachable as
 * `self.answerFromNotification` — the browser tests call it, as no DevTools
 * command clicks a notification.
 */
function answerFromNotification(notification, action) {
  const data = notification.data ?? {}
  if (action && data.interaction?.id) return answer(notification, action)
  notification.close()
  return open(data.page ?? "/inbox")
}

self.addEventListener("notificationclick", (event) => {
  event.waitUntil(answerFromNotification(event.notification, event.action))
})

// The browser renewed the subscription: tell Herald, so pushes keep coming to this browser's device.
self.addEventListener("pushsubscriptionchange", (event) => {
  event.waitUntil((async () => {
    const keyResponse = await fetch("/api/app/push/web-key", { credentials: "same-origin", headers: { "x-herald-csrf": "1" } })
    if (!keyResponse.ok) return
    const { publicKey } = await keyResponse.json()
    const subscription = event.newSubscription ??
      await self.registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: publicKey })
    await fetch("/api/app/devices", {
      method: "POST",
      credentials: "same-origin",
      headers: { "content-type": "application/json", "x-herald-csrf": "1" },
      body: JSON.stringify({ platform: "web", subscription: subscription.toJSON() })
    })
  })())
})
