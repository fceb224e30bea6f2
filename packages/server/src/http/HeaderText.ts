/**
 * A request header as the text its sender wrote. Node hands header values
 * over as Latin-1 (one character per byte), so a UTF-8 `User-Agent` such as
 * `Café ✓` reads as `CafÃ©` and three more characters for the check mark:
 * a reading the sender never wrote. So the bytes are recovered and read as
 * UTF-8, with U+FFFD for any byte sequence that is not UTF-8 (never a
 * Latin-1 guess).
 */

const utf8 = new TextDecoder("utf-8", { fatal: false })

/** The header's text, decoded from its UTF-8 bytes, at most `maxCodePoints` code points, storable in PostgreSQL. */
export const headerText = (value: string, maxCodePoints: number): string => {
  // Only a value with a character past U+00FF is already text (not from Node's parser): keep it.
  const text = /[^\x00-\xff]/u.test(value) ? value : utf8.decode(Buffer.from(value, "latin1"))
  // By code point, so a cut never leaves half a surrogate pair; U+0000 cannot be stored in `text`.
  return Array.from(text).slice(0, maxCodePoints).join("").replaceAll("\u0000", "\uFFFD")
}
