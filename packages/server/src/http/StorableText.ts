/**
 * Text PostgreSQL cannot store: U+0000 (in `text` and in `jsonb`) and a lone
 * UTF-16 surrogate (JSON's `"\ud800"`, refused by `jsonb`). Both are valid
 * JSON and pass any string schema, so without this check they reached the
 * database and failed there: a 500 for the caller and, inside a statement
 * shared by concurrent requests, a 500 for everyone in that batch. The edge
 * refuses them before any handler runs, for every route at once.
 */

const storable = (s: string) => !s.includes("\u0000") && s.isWellFormed()

// The only escapes that can spell unstorable text: `\u0000` and a surrogate (`\ud800`–`\udfff`).
const suspectEscape = /\\u(?:0000|d[89a-f])/i

/**
 * True when a JSON text holds a key or string value that cannot be stored.
 * Both can only be written as those escapes (raw control characters are
 * invalid JSON, and decoded UTF-8 holds no lone surrogate), so most bodies are
 * cleared by one scan. Invalid JSON is left to the route's decoder to answer;
 * any other parse failure (nesting too deep for the check) refuses the body.
 */
export const jsonHasUnstorableText = (text: string): boolean => {
  if (!suspectEscape.test(text)) return false
  let found = false
  try {
    JSON.parse(text, (key, value) => {
      if (!found && (!storable(key) || (typeof value === "string" && !storable(value)))) found = true
      return value
    })
  } catch (error) {
    return !(error instanceof SyntaxError)
  }
  return found
}

/** True when a plain-text body or a URL (percent-escaped) carries U+0000. */
export const textHasNul = (text: string): boolean => text.includes("\u0000")
export const urlHasNul = (url: string): boolean => /%00/i.test(url)

export const unstorableMessage = "Text must not contain U+0000 (NUL) or an unpaired UTF-16 surrogate."
