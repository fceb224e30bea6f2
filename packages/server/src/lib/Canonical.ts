/**
 * Canonical JSON (object keys sorted, no whitespace) and its SHA-256: the
 * fingerprint of a value that does not depend on key order, used for request
 * bodies (idempotency) and for what a person approves (`actionDigest`).
 */
import { createHash } from "node:crypto"

const canonical = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(canonical)
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.keys(value).sort().map((key) => [key, canonical((value as Record<string, unknown>)[key])])
    )
  }
  return value
}

export const canonicalJson = (value: unknown): string => JSON.stringify(canonical(value))

/** Lowercase hex SHA-256 of the canonical JSON of `value`. */
export const canonicalSha256 = (value: unknown): string =>
  createHash("sha256").update(canonicalJson(value)).digest("hex")
