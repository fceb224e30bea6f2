/**
 * The inbox's live stream (GET /api/app/inbox/stream, server-sent events):
 * one EventSource for the whole console, shared by the pages that listen.
 * An `item` event names an inbox item that was created or changed; after a
 * reconnection the listeners get `{id: "*"}`, since events may have been
 * missed while the stream was down, and reload what they show.
 */
import * as api from "./api.js"
import { useEffect, useRef, useState } from "./html.js"

/** @typedef {{ id: string, origin?: string }} LiveItem */

/** @type {Set<(item: LiveItem) => void>} */
const listeners = new Set()
/** @type {Set<(status: string) => void>} */
const statusListeners = new Set()
/** @type {EventSource | null} */
let source = null
let status = "connecting"
let wasOpen = false
let retry = 0
/** @type {ReturnType<typeof setTimeout> | undefined} */
let retryTimer

const setStatus = (/** @type {string} */ next) => {
  status = next
  statusListeners.forEach((listener) => listener(next))
}

const emit = (/** @type {LiveItem} */ item) => listeners.forEach((listener) => listener(item))

const connect = () => {
  clearTimeout(retryTimer)
  source = new EventSource(api.inboxStreamUrl)
  source.addEventListener("open", () => {
    retry = 0
    setStatus("live")
    if (wasOpen) emit({ id: "*" })
    wasOpen = true
  })
  source.addEventListener("item", (event) => {
    try {
      const item = JSON.parse(/** @type {MessageEvent} */ (event).data)
      if (typeof item?.id === "string") emit(item)
    } catch {
      // not an item: ignored
    }
  })
  source.addEventListener("error", () => {
    if (source?.readyState === EventSource.CLOSED) {
      // The server refused the stream (signed out, or it is down): try again later, more slowly each time.
      source = null
      setStatus("offline")
      retryTimer = setTimeout(() => listeners.size > 0 && connect(), Math.min(30_000, 2_000 * 2 ** retry++))
      api.me().catch(() => {})
    } else {
      setStatus("connecting")
    }
  })
}

/**
 * Calls `onItem` for every live inbox change while the component is shown.
 * @param {(item: LiveItem) => void} onItem
 */
export const useLiveItems = (onItem) => {
  const latest = useRef(onItem)
  latest.current = onItem
  useEffect(() => {
    const listener = (/** @type {LiveItem} */ item) => latest.current(item)
    listeners.add(listener)
    if (source === null) connect()
    return () => void listeners.delete(listener)
  }, [])
}

/** "live", "connecting" or "offline". */
export const useLiveStatus = () => {
  const [current, setCurrent] = useState(status)
  useEffect(() => {
    statusListeners.add(setCurrent)
    setCurrent(status)
    return () => void statusListeners.delete(setCurrent)
  }, [])
  return current
}

/** Closes the stream (signing out). */
export const closeLive = () => {
  source?.close()
  source = null
  wasOpen = false
}
