/**
 * Which redirect URIs a client may register (OAuth 2.1 §2.3.1, RFC 8252 §7,
 * RFC 9700 §4.11): https; http for a loopback host only; or a private-use
 * scheme in RFC 8252 §7.1 reverse-domain form (`com.example.app:/cb`). A
 * browser hands a private-use URI to whatever local program claims the
 * scheme, so schemes that operating systems and browsers claim themselves
 * (Windows search and settings, shell and help handlers, macOS system
 * panes, app-store installers, …) are refused: a redirect there runs a local
 * program the person never chose.
 */
import { OAUTH_MAX_REDIRECT_URIS, OAUTH_MAX_REDIRECT_URIS_TOTAL, OAUTH_MAX_URI_LENGTH } from "@herald/api"

const LOOPBACK_HOSTS = new Set(["localhost", "127.0.0.1", "[::1]"])

// eslint-disable-next-line no-control-regex
export const CONTROL = /[\u0000-\u001f\u007f]/

/** Schemes a browser runs or reads locally, that are not redirect targets, or that the OS or a browser handles. */
const REFUSED_SCHEMES = new Set([
  // Browser-local content and non-redirect schemes.
  "javascript", "data", "file", "vbscript", "blob", "about", "filesystem", "ws", "wss", "ftp", "mailto", "tel", "sms",
  "view-source", "jar", "resource", "chrome", "chrome-extension", "moz-extension", "edge", "opera", "brave",
  // Windows protocol handlers (search-ms and ms-msdt were exploited through exactly such redirects).
  "search", "shell", "hcp", "help", "its", "mk", "res", "ldap", "ldaps", "callto", "skype", "sip", "sips", "calculator",
  "microsoft-edge", "read", "onenote", "outlook",
  // Network shares and remote sessions a handler opens.
  "smb", "nfs", "afp", "cifs", "webdav", "dav", "telnet", "ssh", "sftp", "rdp", "vnc", "x-remote",
  // macOS and iOS handlers and installers.
  "applescript", "facetime", "facetime-audio", "itms", "itms-apps", "itms-services", "itms-appss", "macappstore",
  "ibooks", "maps", "music", "shortcuts", "prefs", "app-prefs",
  // Android intents and content providers.
  "intent", "android-app", "content",
  // Linux desktop handlers.
  "gnome-help", "ghelp", "man", "info", "apt", "snap", "appstream",
  // Feeds and others a desktop opens in a reader.
  "webcal", "feed", "irc", "ircs", "news", "nntp", "gopher", "magnet", "steam", "zoommtg"
])

/** Families of OS handler schemes (`ms-settings`, `ms-msdt`, `search-ms`, `x-apple.systempreferences`, …). */
const REFUSED_PREFIXES = ["ms-", "search-", "x-apple", "microsoft", "windows", "vnd.ms-", "x-windows", "x-gnome", "x-kde"]

/** RFC 8252 §7.1: a domain name under the app's control, reversed (`com.example.app`): at least two labels. */
const REVERSE_DOMAIN = /^[a-z][a-z0-9-]*(\.[a-z0-9-]+)+$/

const refusedScheme = (name: string) => REFUSED_SCHEMES.has(name) || REFUSED_PREFIXES.some((p) => name.startsWith(p))

/**
 * Why a redirect URI is refused, or undefined when it is acceptable. `extraSchemes` are private-use
 * scheme names the operator accepts without a "." (HERALD_OAUTH_EXTRA_PRIVATE_SCHEMES).
 */
export const redirectUriProblem = (uri: unknown, extraSchemes: ReadonlyArray<string> = []): string | undefined => {
  if (typeof uri !== "string" || uri.length === 0) return "each redirect URI must be a non-empty string"
  if (uri.length > OAUTH_MAX_URI_LENGTH) return `a redirect URI is at most ${OAUTH_MAX_URI_LENGTH} characters`
  if (CONTROL.test(uri) || uri.includes(" ")) return "a redirect URI has no spaces or control characters"
  if (uri.includes("#")) return "a redirect URI has no fragment"
  let url: URL
  try {
    url = new URL(uri)
  } catch {
    return `not an absolute URI: ${uri}`
  }
  const name = url.protocol.toLowerCase().replace(/:$/, "")
  if (name === "https" || name === "http") {
    if (url.username !== "" || url.password !== "") return "a redirect URI has no user information"
    if (name === "http" && !LOOPBACK_HOSTS.has(url.hostname)) return "http is allowed only for a loopback host (localhost, 127.0.0.1, [::1]); use https"
    return undefined
  }
  if (refusedScheme(name)) return `the ${name}: scheme is not allowed (a browser, the operating system or another program handles it)`
  if (REVERSE_DOMAIN.test(name) || extraSchemes.includes(name)) return undefined
  return `the ${name}: scheme is not allowed: a private-use scheme is a reverse domain name the app controls (RFC 8252 §7.1), e.g. com.example.app:/callback`
}

/** Why a client's list of redirect URIs is refused (count, each URI, their total size), or undefined. */
export const redirectUrisProblem = (uris: unknown, extraSchemes: ReadonlyArray<string>): string | undefined => {
  if (!Array.isArray(uris) || uris.length === 0 || uris.length > OAUTH_MAX_REDIRECT_URIS) {
    return `redirect_uris must be an array of 1 to ${OAUTH_MAX_REDIRECT_URIS} URIs`
  }
  for (const uri of uris) {
    const problem = redirectUriProblem(uri, extraSchemes)
    if (problem !== undefined) return problem
  }
  // Each URI may be 2,000 characters, but ten of them are stored on every row: bound the sum too.
  const total = (uris as ReadonlyArray<string>).reduce((sum, uri) => sum + uri.length, 0)
  if (total > OAUTH_MAX_REDIRECT_URIS_TOTAL) return `redirect_uris are at most ${OAUTH_MAX_REDIRECT_URIS_TOTAL} characters together`
  return undefined
}
