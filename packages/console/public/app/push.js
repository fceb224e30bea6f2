/**
 * "Notify this browser": permission, the service worker, a push subscription
 * to Herald's VAPID key (GET /api/app/push/web-key) and the device of
 * platform `web` that carries it (POST /api/app/devices). The device id of
 * this browser is remembered here so the devices page can say which it is.
 */
import * as api from "./api.js"
import { decode } from "./webauthn.js"

const DEVICE_KEY = "herald.deviceId"

export const pushSupported = () => "serviceWorker" in navigator && "PushManager" in globalThis && "Notification" in globalThis

/** "granted", "denied", "default" or "unsupported". */
export const permission = () => (pushSupported() ? Notification.permission : "unsupported")

export const thisDeviceId = () => localStorage.getItem(DEVICE_KEY)

/** A short name for a User-Agent string: "Chrome on Android", "Firefox on Linux", … */
export const describeAgent = (/** @type {string} */ ua) => {
  const browser = /Edg\//.test(ua) ? "Edge" : /Firefox\//.test(ua) ? "Firefox" : /Chrom(e|ium)\//.test(ua) ? "Chrome" : /Safari\//.test(ua) ? "Safari" : undefined
  const os = /Android/.test(ua) ? "Android" : /iPhone|iPad/.test(ua) ? "iOS" : /Mac OS X/.test(ua) ? "macOS" : /Windows/.test(ua) ? "Windows" : /Linux/.test(ua) ? "Linux" : undefined
  return browser === undefined ? ua.slice(0, 60) || "Browser" : os === undefined ? browser : `${browser} on ${os}`
}

/** A name for this browser. */
export const browserName = () => describeAgent(navigator.userAgent)

const sameKey = (/** @type {ArrayBuffer | null} */ current, /** @type {Uint8Array} */ wanted) => {
  if (current === null) return false
  const bytes = new Uint8Array(current)
  return bytes.length === wanted.length && bytes.every((b, i) => b === wanted[i])
}

/** Asks for permission, subscribes and registers this browser; resolves to the Device. */
export const enableThisBrowser = async (/** @type {string} */ deviceName) => {
  if (!pushSupported()) throw new Error("This browser cannot receive web push notifications.")
  const answer = await Notification.requestPermission()
  if (answer !== "granted") {
    throw new Error(answer === "denied"
      ? "Notifications are blocked for this site. Allow them in the browser's site settings, then try again."
      : "Notifications were not allowed.")
  }
  const registration = await navigator.serviceWorker.register("/sw.js", { scope: "/" })
  await navigator.serviceWorker.ready
  const { publicKey } = await api.webPushKey()
  const key = decode(publicKey)
  let subscription = await registration.pushManager.getSubscription()
  // A subscription to a key Herald no longer signs with (rotated) would never receive anything.
  if (subscription !== null && !sameKey(subscription.options.applicationServerKey, key)) {
    await subscription.unsubscribe()
    subscription = null
  }
  try {
    subscription ??= await registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: key })
  } catch (e) {
    throw new Error(`This browser could not subscribe to push notifications (${/** @type {any} */ (e)?.message ?? e}). Its push service may be unreachable or turned off.`)
  }
  // Live activities reach a browser as a notification each update replaces (sw.js, `card`).
  const device = await api.deviceRegister({
    body: { platform: "web", deviceName, subscription: subscription.toJSON(), liveActivitiesCapable: true }
  })
  localStorage.setItem(DEVICE_KEY, device.id)
  return device
}

/** Stops pushes to this browser: unsubscribes and removes its device. */
export const disableThisBrowser = async () => {
  const id = thisDeviceId()
  const registration = await navigator.serviceWorker?.getRegistration("/")
  const subscription = await registration?.pushManager.getSubscription()
  await subscription?.unsubscribe()
  if (id !== null) {
    await api.deviceRemove({ params: { id } }).catch((/** @type {any} */ e) => {
      if (e.status !== 404) throw e
    })
  }
  localStorage.removeItem(DEVICE_KEY)
}
