/**
 * The one place the console talks to Herald: every Person API call it makes
 * is declared here (method and path, as in @herald/api's AppApi — a server
 * test walks AppApi and fails on any call it does not declare). Requests go
 * to this origin with the session cookie and `X-Herald-CSRF: 1` (contract of
 * issue 32: a cookie-authenticated write without it is refused), and an
 * error body `{error, code}` becomes an ApiError with a message a person can
 * read. The typed Effect client is not shipped to the browser: it would
 * outweigh the whole console.
 *
 * Nothing here touches browser globals when the module loads, so the server
 * test can import it.
 */

const BASE = "/api/app"

/** @typedef {{ method: string, path: string }} Declared */
/** @type {Declared[]} */
const declared = []

/** Every call the console makes: `{method, path}` with `:param` placeholders, under /api/app. */
export const declaredEndpoints = () => declared.map((d) => ({ ...d }))

export class ApiError extends Error {
  /**
   * @param {number} status
   * @param {string} code
   * @param {string} message
   */
  constructor(status, code, message) {
    super(message)
    this.status = status
    this.code = code
  }
}

/** Called when an answer says the session is gone (401): the console sends the person to sign in. */
let onSignedOut = () => {}
/** @param {() => void} handler */
export const whenSignedOut = (handler) => {
  onSignedOut = handler
}

/** Messages for codes whose server text is written for developers. */
const friendly = {
  NETWORK: "Herald cannot be reached. Check the connection and try again.",
  UNAUTHORIZED: "You are signed out. Sign in again.",
  CSRF_REJECTED: "The request was refused as coming from another site. Reload the page and try again.",
  RATE_LIMITED: "Too many attempts. Wait a minute and try again."
}

/**
 * @param {number} status
 * @param {any} body
 */
const errorOf = (status, body) => {
  const code = typeof body?.code === "string" ? body.code : `HTTP_${status}`
  let message = friendly[/** @type {keyof typeof friendly} */ (code)] ?? (typeof body?.error === "string" ? body.error : `Herald answered ${status}.`)
  if (Array.isArray(body?.issues) && body.issues.length > 0) {
    const where = (/** @type {any} */ path) => (Array.isArray(path) ? path.join(".") : typeof path === "string" ? path : "") || "body"
    message += " " + body.issues.slice(0, 3).map((/** @type {any} */ i) => `${where(i.path)}: ${i.message}`).join("; ")
  }
  if (typeof body?.required === "string" || Array.isArray(body?.required)) message += ` (needs ${[body.required].flat().join(", ")})`
  return new ApiError(status, code, message)
}

/**
 * @param {string} path
 * @param {Record<string, string>} [params]
 * @param {Record<string, unknown>} [query]
 */
const urlOf = (path, params = {}, query = {}) => {
  const filled = path.replace(/:(\w+)/g, (_, name) => {
    const value = params[name]
    if (value === undefined || value === "") throw new ApiError(0, "BAD_CALL", `Missing ${name}.`)
    return encodeURIComponent(value)
  })
  const search = new URLSearchParams()
  for (const [name, value] of Object.entries(query)) {
    if (value !== undefined && value !== null && value !== "") search.set(name, String(value))
  }
  const text = search.toString()
  return BASE + filled + (text === "" ? "" : `?${text}`)
}

/**
 * @param {string} method
 * @param {string} path
 * @param {{ params?: Record<string, string>, query?: Record<string, unknown>, body?: unknown }} options
 */
const send = async (method, path, options) => {
  const url = urlOf(path, options.params, options.query)
  /** @type {Record<string, string>} */
  const headers = { "accept": "application/json", "x-herald-csrf": "1" }
  if (options.body !== undefined) headers["content-type"] = "application/json"
  let response
  try {
    response = await fetch(url, {
      method,
      headers,
      credentials: "same-origin",
      body: options.body === undefined ? undefined : JSON.stringify(options.body)
    })
  } catch {
    throw errorOf(0, { code: "NETWORK" })
  }
  const text = await response.text()
  let body = null
  try {
    body = text === "" ? null : JSON.parse(text)
  } catch {
    body = null
  }
  if (!response.ok) {
    const error = errorOf(response.status, body)
    if (response.status === 401) onSignedOut()
    throw error
  }
  return body
}

/**
 * Declares a call and returns the function that makes it.
 * @param {"GET" | "POST" | "PATCH" | "PUT" | "DELETE"} method
 * @param {string} path
 * @returns {(options?: { params?: Record<string, string>, query?: Record<string, unknown>, body?: unknown }) => Promise<any>}
 */
const endpoint = (method, path) => {
  declared.push({ method, path: BASE + path })
  return (options = {}) => send(method, path, options)
}

// The person
export const me = endpoint("GET", "/me")

// Signing in and out (auth/)
export const emailLink = endpoint("POST", "/auth/email-link")
export const passkeySignInOptions = endpoint("POST", "/auth/passkey/options")
export const passkeySignIn = endpoint("POST", "/auth/passkey")
export const signOut = endpoint("POST", "/auth/sign-out")
export const passkeyOptions = endpoint("POST", "/passkeys/options")
export const passkeyAdd = endpoint("POST", "/passkeys")
export const passkeys = endpoint("GET", "/passkeys")
export const passkeyRemove = endpoint("DELETE", "/passkeys/:id")
export const sessions = endpoint("GET", "/sessions")
export const sessionRevoke = endpoint("DELETE", "/sessions/:id")

// Quiet hours
export const quietHours = endpoint("GET", "/me/quiet-hours")
export const quietSet = endpoint("PUT", "/me/quiet-hours")
export const quietMute = endpoint("POST", "/me/quiet-hours/mute")
export const quietUnmute = endpoint("DELETE", "/me/quiet-hours/mute")

// The e-mail channel
export const emailChannel = endpoint("GET", "/me/email-channel")
export const emailChannelSet = endpoint("PUT", "/me/email-channel")

// Devices and Web Push
export const webPushKey = endpoint("GET", "/push/web-key")
export const devices = endpoint("GET", "/devices")
export const deviceRegister = endpoint("POST", "/devices")
export const deviceRename = endpoint("PATCH", "/devices/:id")
export const deviceRemove = endpoint("DELETE", "/devices/:id")

// The inbox
export const inbox = endpoint("GET", "/inbox")
export const inboxItem = endpoint("GET", "/inbox/:id")
export const inboxRead = endpoint("POST", "/inbox/:id/read")
export const inboxUnread = endpoint("POST", "/inbox/:id/unread")
export const inboxReadAll = endpoint("POST", "/inbox/read-all")
declared.push({ method: "GET", path: `${BASE}/inbox/stream` })
/** The inbox's server-sent events (an EventSource, not fetch: it reconnects by itself). */
export const inboxStreamUrl = `${BASE}/inbox/stream`

// Prompts
export const prompts = endpoint("GET", "/interactions")
export const prompt = endpoint("GET", "/interactions/:id")
export const answer = endpoint("POST", "/interactions/:id/answer")

// Live activities
export const activities = endpoint("GET", "/activities")

// API tokens and OAuth connections
export const tokens = endpoint("GET", "/tokens")
export const tokenCreate = endpoint("POST", "/tokens")
export const tokenRevoke = endpoint("DELETE", "/tokens/:id")

// Teams and families
export const teams = endpoint("GET", "/teams")
export const team = endpoint("GET", "/teams/:id")
export const teamInvites = endpoint("GET", "/teams/:id/invites")
export const teamInviteCreate = endpoint("POST", "/teams/:id/invites")
export const teamInviteRevoke = endpoint("DELETE", "/teams/:id/invites/:inviteId")
export const teamLeave = endpoint("POST", "/teams/:id/leave")
export const invitePreview = endpoint("GET", "/invites/:code")
export const inviteAccept = endpoint("POST", "/invites/accept")

// On-call
export const oncall = endpoint("GET", "/oncall")
export const pages = endpoint("GET", "/pages")
export const pageAcknowledge = endpoint("POST", "/pages/:id/acknowledge")
export const pageEscalate = endpoint("POST", "/pages/:id/escalate")

// Web apps and mini-apps
export const apps = endpoint("GET", "/apps")
export const appConsent = endpoint("POST", "/apps/:id/consent")
export const appPreferences = endpoint("PATCH", "/apps/:id/preferences")
export const miniApp = endpoint("GET", "/mini-apps/:packageId")
