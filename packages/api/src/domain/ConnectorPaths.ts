/**
 * The path of a `connector://{connectorId}{path}` reply-webhook target. The
 * gateway forwards a delivery's path to the route whose `pathPrefix` covers
 * it, so a path that a later reader (the gateway, its HTTP library, the
 * upstream's server) may resolve to another place would escape the prefix it
 * was authorized under: `/cb/../admin` starts with `/cb` but names `/admin`.
 * Such spellings are refused rather than normalised, so the path Herald
 * authorizes is the path every reader sees. The same rule guards the request
 * schema (400 `VALIDATION_FAILED`) and the server's prefix match.
 */

const ESCAPE = /%([0-9A-Fa-f]{2})/g

const decodeOnce = (text: string) => text.replace(ESCAPE, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)))

// Percent-escapes are decoded until nothing changes (bounded): a reader that
// decodes twice must not find a dot segment or a separator the first reading hid.
const MAX_DECODES = 4

const slashes = (text: string) => text.split("/").length - 1

/**
 * Why the path (its query and fragment aside) is refused, or undefined when it
 * is sound: it starts with `/`, and — with every percent-escape decoded, in
 * any case, repeatedly — holds no `.` or `..` segment, no empty segment
 * (`//`, except one trailing slash), no backslash, no `/` written as an escape
 * (`%2f`, `%252f`), and no control character.
 */
export const connectorPathProblem = (path: string): string | undefined => {
  if (!path.startsWith("/")) return "the path must start with /"
  const end = path.search(/[?#]/u)
  const raw = end === -1 ? path : path.slice(0, end)
  let decoded = raw
  for (let i = 0; i < MAX_DECODES; i++) {
    if (decoded.includes("\\")) return "the path may not hold a backslash (\\ or %5c)"
    if (/[\x00-\x1f\x7f]/u.test(decoded)) return "the path may not hold a control character"
    if (slashes(decoded) !== slashes(raw)) return "the path may not hold an encoded / (%2f)"
    const segments = decoded.split("/").slice(1)
    if (segments.some((s) => s === "." || s === "..")) return "the path may not hold a . or .. segment (plain or percent-encoded)"
    if (segments.slice(0, -1).some((s) => s === "")) return "the path may not hold an empty segment (//)"
    const next = decodeOnce(decoded)
    if (next === decoded) return undefined
    decoded = next
  }
  return "the path is percent-encoded more than 3 times over"
}

const CONNECTOR_URL = /^connector:\/\/[^/?#]*(.*)$/su

/** Why a reply-webhook URL is refused for its connector path; undefined for a sound one or any other URL. */
export const connectorUrlProblem = (url: string): string | undefined => {
  if (!url.toLowerCase().startsWith("connector:")) return undefined
  const m = CONNECTOR_URL.exec(url)
  // The URL's shape itself is judged with the connector (400 `WEBHOOK_TARGET_REFUSED`).
  if (m === null || !m[1]!.startsWith("/")) return undefined
  return connectorPathProblem(m[1]!)
}
