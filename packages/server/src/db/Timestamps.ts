/**
 * `timestamptz` values cross the driver as ISO 8601 strings (UTC, millisecond
 * precision) rather than `Date`s: that is their wire form in both APIs, so
 * rows decode straight into the contract's records and no handler converts.
 * Parameters may be ISO strings, `Date`s or epoch milliseconds.
 */
import { PgTypes } from "@effect/sql-pg"
import { Result } from "effect"

// PostgreSQL's binary timestamps count microseconds from 2000-01-01T00:00:00Z.
const PG_EPOCH_MS = 946_684_800_000

const toMicros = (value: unknown): bigint | undefined => {
  const ms = value instanceof Date ? value.getTime()
    : typeof value === "number" ? value
    : typeof value === "string" ? Date.parse(value)
    : Number.NaN
  return Number.isFinite(ms) ? BigInt(Math.round((ms - PG_EPOCH_MS) * 1000)) : undefined
}

const isoCodec: PgTypes.Codec<string> = {
  decode: (bytes) => {
    if (bytes.byteLength !== 8) return Result.fail(new PgTypes.CodecError({ message: "timestamptz: expected 8 bytes" }))
    const micros = new DataView(bytes.buffer, bytes.byteOffset, 8).getBigInt64(0)
    if (micros === 0x7fff_ffff_ffff_ffffn) return Result.succeed("infinity")
    if (micros === -0x8000_0000_0000_0000n) return Result.succeed("-infinity")
    return Result.succeed(new Date(Number(micros / 1000n) + PG_EPOCH_MS).toISOString())
  },
  encode: (value) => {
    const micros = toMicros(value)
    if (micros === undefined) return Result.fail(new PgTypes.CodecError({ message: `timestamptz: not a time: ${String(value)}` }))
    const out = new Uint8Array(8)
    new DataView(out.buffer).setBigInt64(0, micros)
    return Result.succeed(out)
  }
}

/** The registry every Herald client uses. */
export const makeTypes = (): PgTypes.Registry => {
  const registry = PgTypes.makeRegistry()
  registry.register(PgTypes.OID.timestamptz, isoCodec, { arrayOid: PgTypes.OID.timestamptzArray })
  return registry
}
