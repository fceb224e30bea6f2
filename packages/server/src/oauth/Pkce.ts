/**
 * PKCE (RFC 7636), S256 only: OAuth 2.1 drops `plain`, which would let
 * anyone who saw the authorization request redeem its code.
 */
import { createHash, timingSafeEqual } from "node:crypto"

/** A verifier: 43 to 128 unreserved characters (RFC 7636 §4.1). */
const VERIFIER = /^[A-Za-z0-9\-._~]{43,128}$/

/** A challenge: BASE64URL of a SHA-256 digest, 43 characters without padding. */
const CHALLENGE = /^[A-Za-z0-9\-_]{43}$/

export const isChallenge = (challenge: string): boolean => CHALLENGE.test(challenge)

export const isVerifier = (verifier: string): boolean => VERIFIER.test(verifier)

/** BASE64URL(SHA256(ASCII(verifier))). */
export const challengeOf = (verifier: string): string => createHash("sha256").update(verifier, "ascii").digest("base64url")

/** True when the verifier is well formed and its S256 challenge is `challenge`. */
export const verifies = (verifier: string, challenge: string): boolean => {
  if (!isVerifier(verifier)) return false
  const computed = Buffer.from(challengeOf(verifier))
  const expected = Buffer.from(challenge)
  return computed.length === expected.length && timingSafeEqual(computed, expected)
}
