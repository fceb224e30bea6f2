/**
 * One spelling per path. The router ignores nothing (case-sensitive, `//`
 * kept: Routes.ts), and a request path in any other form answers 404 before
 * routing, so the route a request reaches is the one its path names and every
 * check keyed by route sees it. Canonical means:
 *
 * - origin form (`/…`), no `;` or `#` in the path (the router would end the
 *   path there and match a shorter one);
 * - no empty segment (`//`), except one trailing slash: the same path as
 *   without it, for the router and for every check;
 * - no `.` or `..` segment;
 * - no percent-escape of an unreserved character (`A`–`Z`, `a`–`z`, `0`–`9`,
 *   `-`, `.`, `_`, `~`: `%68ooks` is `hooks` spelled twice), and no malformed
 *   escape. Escapes of other characters (`%2F`, `%E2%9C%93`) stay: they are
 *   how those characters are written.
 */

const isHex = (c: number) => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66)

const isUnreserved = (c: number) =>
  (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) ||
  c === 0x2d || c === 0x2e || c === 0x5f || c === 0x7e

/** True when the request target's path (the query aside) is in the canonical form. */
export const isCanonicalPath = (url: string): boolean => {
  const query = url.indexOf("?")
  const end = query === -1 ? url.length : query
  if (url.charCodeAt(0) !== 0x2f) return false
  let segmentStart = 1
  // One pass; the position `end` closes the last segment.
  for (let i = 1; i <= end; i++) {
    const c = i === end ? 0x2f : url.charCodeAt(i)
    if (c === 0x2f) {
      const length = i - segmentStart
      if (length === 0 && i !== end) return false
      if (url.charCodeAt(segmentStart) === 0x2e && (length === 1 || (length === 2 && url.charCodeAt(segmentStart + 1) === 0x2e))) {
        return false
      }
      segmentStart = i + 1
    } else if (c === 0x25) {
      const high = url.charCodeAt(i + 1)
      const low = url.charCodeAt(i + 2)
      if (i + 2 >= end || !isHex(high) || !isHex(low)) return false
      if (isUnreserved(Number.parseInt(url.slice(i + 1, i + 3), 16))) return false
      i += 2
    } else if (c === 0x3b || c === 0x23) {
      return false
    }
  }
  return true
}
