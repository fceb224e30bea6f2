/**
 * Text PostgreSQL cannot store: U+0000 (in `text` and in `jsonb`) and a lone
 * UTF-16 surrogate (JSON's `"\ud800"`, refused by `jsonb`). Both are valid
 * JSON and pass any string schema, so without this check they reached the
 * database and failed there: a 500 for the caller and, inside a statement
 * shared by concurrent requests, a 500 for everyone in that batch. The body
 * guard (BodyGuard.ts) refuses them before any handler runs, for every route
 * at once.
 */

/** What one scan of a JSON text found first: nothing, text that cannot be stored, or nesting over the bound. */
export type JsonScan = "ok" | "unstorable" | "tooDeep"

// The value of four hex digits at `at`, or -1.
const hex4 = (text: string, at: number): number => {
  let value = 0
  for (let i = at; i < at + 4; i++) {
    const c = text.charCodeAt(i)
    const digit = c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x41 && c <= 0x46 ? c - 0x37 : c >= 0x61 && c <= 0x66 ? c - 0x57 : -1
    if (digit < 0) return -1
    value = value * 16 + digit
  }
  return value
}

/**
 * Scans a JSON text once, character by character, without parsing it: no
 * allocation, no recursion, so its cost is linear in the text whatever its
 * shape (about 3 ms a MiB at worst), and it stops at the first finding.
 *
 * - Nesting: `[`/`{` outside strings deeper than `maxDepth` is `tooDeep`,
 *   found before `JSON.parse` and the route's decoder walk the text (both cost
 *   far more per level than per byte: docs/limits.md).
 * - Unstorable text in a key or a value can only be written as an escape: raw
 *   control characters are invalid JSON, and text decoded from UTF-8 holds no
 *   lone surrogate. So `\u0000`, a high-surrogate escape not followed by a
 *   low one, and a low one alone are `unstorable`.
 *
 * Invalid JSON is scanned as far as it goes; the route's decoder answers it.
 */
export const scanJson = (text: string, maxDepth: number): JsonScan => {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 0x22) {
        inString = false
      } else if (c === 0x5c && text.charCodeAt(i + 1) === 0x75) {
        // `\uXXXX`: the only way to write U+0000 or a surrogate.
        const unit = hex4(text, i + 2)
        if (unit === 0 || (unit >= 0xdc00 && unit <= 0xdfff)) return "unstorable"
        if (unit >= 0xd800 && unit <= 0xdbff) {
          const low = text.charCodeAt(i + 6) === 0x5c && text.charCodeAt(i + 7) === 0x75 ? hex4(text, i + 8) : -1
          if (low < 0xdc00 || low > 0xdfff) return "unstorable"
          i += 11
        } else {
          i += 5
        }
      } else if (c === 0x5c) {
        // Any other escape is two characters (`\"`, `\\`, …): skip the escaped one.
        i += 1
      }
    } else if (c === 0x22) {
      inString = true
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > maxDepth) return "tooDeep"
    } else if (c === 0x5d || c === 0x7d) {
      depth--
    }
  }
  return "ok"
}

/** True when a plain-text body or a URL (percent-escaped) carries U+0000. */
export const textHasNul = (text: string): boolean => text.includes("\u0000")
export const urlHasNul = (url: string): boolean => /%00/i.test(url)

export const unstorableMessage = "Text must not contain U+0000 (NUL) or an unpaired UTF-16 surrogate."
