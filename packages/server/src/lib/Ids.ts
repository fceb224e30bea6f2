/**
 * Opaque ids: a type prefix and a time-sortable body (48-bit millisecond time
 * then 80 random bits, Crockford base32, 26 chars), so ids sort by creation
 * (within a millisecond too, for the ids of one process) and never collide across processes.
 */
import { Clock, Effect } from "effect"
import { randomFillSync } from "node:crypto"

const alphabet = "0123456789abcdefghjkmnpqrstvwxyz"

export type IdPrefix =
  | "usr" | "tok" | "ses" | "dev" | "svc" | "whk" | "whd" | "evt" | "anot" | "int" | "act" | "app"
  | "team" | "inv" | "grp" | "ocg" | "ovr" | "page" | "conn" | "pkg" | "aud" | "ocl" | "org" | "sbx" | "rcp" | "afi" | "mrep"
  | "pky" | "wac"

/** The id body for a given time and 10 random bytes. */
export const encodeIdBody = (millis: number, random: Uint8Array): string => {
  let out = ""
  let time = millis
  for (let i = 0; i < 10; i++) {
    out = alphabet[time % 32]! + out
    time = Math.floor(time / 32)
  }
  // 80 random bits = 16 base32 characters, 5 bits at a time.
  let bits = 0
  let value = 0
  for (const byte of random) {
    value = (value << 8) | byte
    bits += 8
    while (bits >= 5) {
      out += alphabet[(value >>> (bits - 5)) & 31]
      bits -= 5
    }
    value &= (1 << bits) - 1
  }
  return out
}

// Random bytes are drawn 4 KiB at a time: one call to the system's generator
// per ~400 ids instead of one per id (ids are made several times a request).
const pool = Buffer.alloc(4096)
let offset = pool.length
const random10 = (): Uint8Array => {
  if (offset + 10 > pool.length) {
    randomFillSync(pool)
    offset = 0
  }
  const bytes = pool.subarray(offset, offset + 10)
  offset += 10
  return bytes
}

// Within one millisecond, each id's random part is the one before plus one: ids of a process then
// sort in the order they were made (lists ordered by id, e.g. pushes to a device, depend on it).
// An id is a name, never a credential (tokens, codes and links are secrets drawn apart), so ids
// that follow one another within a millisecond give nothing away.
let lastMillis = -1
const lastRandom = new Uint8Array(10)
const randomFor = (millis: number): Uint8Array => {
  if (millis !== lastMillis) {
    lastMillis = millis
    lastRandom.set(random10())
    return lastRandom
  }
  for (let i = lastRandom.length - 1; i >= 0; i--) {
    lastRandom[i] = (lastRandom[i]! + 1) & 255
    if (lastRandom[i] !== 0) break
  }
  return lastRandom
}

export const makeId = (prefix: IdPrefix): Effect.Effect<string> =>
  Effect.map(Clock.currentTimeMillis, (now) => `${prefix}_${encodeIdBody(now, randomFor(now))}`)
