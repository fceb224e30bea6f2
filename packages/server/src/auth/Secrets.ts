/**
 * Secret tokens in the GitHub format: a readable type prefix, 256 random bits
 * in base62, and a 6-character base62 CRC32 of the random part, so secret
 * scanners recognise a leaked token and a typo is refused without a lookup.
 * Only the SHA-256 hash of the whole token is ever stored.
 */
import { hash, randomBytes } from "node:crypto"
import { crc32 } from "node:zlib"

/**
 * `hld` API token · `hls` person session · `hlw` inbound webhook URL · OAuth
 * (auth/ and oauth/): `hlo` access token · `hlr` refresh token · `hla`
 * authorization code · `hlc` client secret · `hll` one-time sign-in link.
 */
export type SecretKind = "hld" | "hls" | "hlw" | "hlo" | "hlr" | "hla" | "hlc" | "hll"

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
const BODY_LENGTH = 43 // ceil(256 / log2(62))
const CHECKSUM_LENGTH = 6

const encodeBase62 = (value: bigint, length: number): string => {
  let out = ""
  let v = value
  for (let i = 0; i < length; i++) {
    out = base62[Number(v % 62n)] + out
    v /= 62n
  }
  return out
}

const checksum = (body: string) => encodeBase62(BigInt(crc32(body)), CHECKSUM_LENGTH)

/** A fresh secret of the given kind. */
export const generateSecret = (kind: SecretKind): string => {
  const body = encodeBase62(BigInt(`0x${randomBytes(32).toString("hex")}`), BODY_LENGTH)
  return `${kind}_${body}${checksum(body)}`
}

const shape = /^(hld|hls|hlw|hlo|hlr|hla|hlc|hll)_([0-9A-Za-z]{43})([0-9A-Za-z]{6})$/

/** True when the token has the kind's shape and its checksum matches. */
export const isWellFormed = (token: string, kind: SecretKind): boolean => {
  const m = shape.exec(token)
  return m !== null && m[1] === kind && checksum(m[2]!) === m[3]
}

/** The stored form: hex SHA-256 of the whole token. */
export const hashSecret = (token: string): string => hash("sha256", token, "hex")

/** The identifying prefix shown in reads: the kind and the first eight characters of the body. */
export const displayPrefix = (token: string): string => token.slice(0, 12)
