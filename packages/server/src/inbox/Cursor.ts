/**
 * Signed inbox tokens: the list's `nextCursor` and its `readThroughToken`.
 *
 * A token is `base64url(JSON content) "." base64url(HMAC-SHA256(key, content))`
 * with a server-held key (table `server_secrets`), so a caller can hand it
 * back but not forge or alter it. The content names its kind (`c` cursor, `r`
 * read-through) and the account, so neither kind passes for the other nor for
 * another account; a cursor also names the list filter it was made for.
 */
import { Option, Schema } from "effect"
import { createHmac, timingSafeEqual } from "node:crypto"

/** A page boundary: the next page holds the items with `seq` below `seq` under filter `filter`. */
const CursorContent = Schema.Struct({
  k: Schema.Literal("c"),
  u: Schema.String,
  f: Schema.String,
  s: Schema.String.check(Schema.isPattern(/^[0-9]{1,19}$/))
})

/** A moment of the inbox: every item with `seq` up to `seq` existed when the list was answered. */
const ReadThroughContent = Schema.Struct({
  k: Schema.Literal("r"),
  u: Schema.String,
  s: Schema.String.check(Schema.isPattern(/^[0-9]{1,19}$/))
})

const decodeCursor = Schema.decodeUnknownOption(Schema.fromJsonString(CursorContent))
const decodeReadThrough = Schema.decodeUnknownOption(Schema.fromJsonString(ReadThroughContent))

const PART = /^[A-Za-z0-9_-]+$/

const mac = (key: Buffer, content: string) => createHmac("sha256", key).update(content).digest()

/** Signs `content` with `key`: also the audit log's cursors (teams/AuditLog.ts), under their own key and kind. */
export const sign = (key: Buffer, content: object): string => {
  const encoded = Buffer.from(JSON.stringify(content)).toString("base64url")
  return `${encoded}.${mac(key, encoded).toString("base64url")}`
}

/** The content of a token whose signature holds, still JSON text; none when garbled or altered. */
export const open = (key: Buffer, token: string): Option.Option<string> => {
  const parts = token.split(".")
  if (parts.length !== 2 || !PART.test(parts[0]!) || !PART.test(parts[1]!)) return Option.none()
  // Compared in its text form: base64 decoding ignores a last character's
  // spare bits, so comparing decoded bytes would let two spellings pass.
  const given = Buffer.from(parts[1]!, "ascii")
  const expected = Buffer.from(mac(key, parts[0]!).toString("base64url"), "ascii")
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return Option.none()
  return Option.some(Buffer.from(parts[0]!, "base64url").toString("utf8"))
}

/** The list filter a cursor is bound to, as one string. */
export const filterKey = (filter: { readonly project: string | undefined; readonly unread: boolean }): string =>
  `${filter.unread ? "unread" : "all"}|${filter.project === undefined ? "*" : `=${filter.project}`}`

export interface InboxTokens {
  readonly cursor: (userId: string, filter: string, seq: string) => string
  /** The `seq` a cursor continues below; none unless made by this server for this account and filter. */
  readonly openCursor: (token: string, userId: string, filter: string) => Option.Option<string>
  readonly readThrough: (userId: string, seq: string) => string
  /** The `seq` a read-through token marks; none unless made by this server for this account. */
  readonly openReadThrough: (token: string, userId: string) => Option.Option<string>
}

/** Signs and checks inbox tokens with `key` (the hex secret of `server_secrets`). */
export const makeInboxTokens = (hexKey: string): InboxTokens => {
  const key = Buffer.from(hexKey, "hex")
  return {
    cursor: (u, f, s) => sign(key, { k: "c", u, f, s }),
    openCursor: (token, userId, filter) =>
      open(key, token).pipe(
        Option.flatMap(decodeCursor),
        Option.filter((c) => c.u === userId && c.f === filter),
        Option.map((c) => c.s)
      ),
    readThrough: (u, s) => sign(key, { k: "r", u, s }),
    openReadThrough: (token, userId) =>
      open(key, token).pipe(
        Option.flatMap(decodeReadThrough),
        Option.filter((c) => c.u === userId),
        Option.map((c) => c.s)
      )
  }
}
