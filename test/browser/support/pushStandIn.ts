/**
 * Headless Chromium here reaches no real push service, so
 * `pushManager.subscribe` would fail. The test stands in for the browser's
 * push service: this init script makes `PushManager.prototype.subscribe` and
 * `getSubscription` answer a subscription whose endpoint is the fake push
 * service on loopback and whose keys the test made (so the test can decrypt
 * what Herald sends). Everything else — permission, the service worker,
 * Herald's key, the device registered — is the console's own code.
 */
import type { BrowserContext } from "playwright-core"

export interface StandInSubscription {
  readonly endpoint: string
  readonly expirationTime: null
  readonly keys: { readonly p256dh: string; readonly auth: string }
}

/** What the page asked the stand-in for: the `applicationServerKey` of each subscribe, base64url. */
export interface StandInRecord {
  readonly subscribedWith: Array<string>
}

/** Installs the stand-in in every page of `context` (before the page's own scripts run). */
export const standInForPushService = (context: BrowserContext, subscription: StandInSubscription) =>
  context.addInitScript((json: StandInSubscription) => {
    const toBase64Url = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "")
    const fromBase64Url = (text: string) => Uint8Array.from(atob(text.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0))
    const record: StandInRecord = { subscribedWith: [] }
    ;(globalThis as { heraldPushStandIn?: StandInRecord }).heraldPushStandIn = record
    let current: object | null = null
    const make = (key: Uint8Array) => {
      const subscription = {
        endpoint: json.endpoint,
        expirationTime: null,
        options: { userVisibleOnly: true, applicationServerKey: key.slice().buffer },
        getKey: (name: "p256dh" | "auth") => fromBase64Url(json.keys[name]).buffer,
        toJSON: () => ({ endpoint: json.endpoint, expirationTime: null, keys: { ...json.keys } }),
        unsubscribe: async () => {
          current = null
          return true
        }
      }
      return subscription
    }
    const keyBytes = (key: unknown): Uint8Array =>
      typeof key === "string" ? fromBase64Url(key) : key instanceof ArrayBuffer ? new Uint8Array(key) : new Uint8Array((key as ArrayBufferView).buffer)
    // This runs in the page, and the repository's types have no DOM: the few browser names used are typed here.
    const page = globalThis as unknown as {
      readonly PushManager?: { readonly prototype: Record<string, unknown> }
      readonly Notification?: { readonly permission: string }
    }
    const manager = page.PushManager?.prototype
    if (manager === undefined) return
    manager.subscribe = async function(options?: { readonly applicationServerKey?: unknown }) {
      const key = keyBytes(options?.applicationServerKey)
      record.subscribedWith.push(toBase64Url(key))
      current = make(key)
      return current
    }
    manager.getSubscription = async function() {
      return current
    }
    manager.permissionState = async function() {
      const permission = page.Notification?.permission ?? "default"
      return permission === "default" ? "prompt" : permission
    }
  }, subscription)
