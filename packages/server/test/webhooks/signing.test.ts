/**
 * Webhook signing, checked by a verifier written here from the Standard
 * Webhooks spec rather than by the module's own code: a receiver using any
 * Standard Webhooks library must accept what Herald sends.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { createHmac, timingSafeEqual } from "node:crypto"
import { generateSigningSecret, signatureHeaders } from "../../src/webhooks/Signing.ts"

interface Signed {
  readonly "webhook-id": string
  readonly "webhook-timestamp": string
  readonly "webhook-signature": string
}

/** The spec's verification: HMAC-SHA256 keyed by the base64 after `whsec_`, over `id.timestamp.body`; any `v1,` entry may match. */
const verify = (secret: string, headers: Signed, body: string): boolean => {
  const key = Buffer.from(secret.slice("whsec_".length), "base64")
  const content = `${headers["webhook-id"]}.${headers["webhook-timestamp"]}.${body}`
  const expected = createHmac("sha256", key).update(content).digest()
  return headers["webhook-signature"].split(" ").some((entry) => {
    const [version, signature] = entry.split(",")
    if (version !== "v1" || signature === undefined) return false
    const given = Buffer.from(signature, "base64")
    return given.length === expected.length && timingSafeEqual(given, expected)
  })
}

describe("webhook signing", () => {
  it.effect("a generated secret is whsec_ + base64 of 32 random bytes", () =>
    Effect.sync(() => {
      const secret = generateSigningSecret()
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/)
      expect(Buffer.from(secret.slice(6), "base64")).toHaveLength(32)
      expect(generateSigningSecret()).not.toBe(secret)
    }))

  it.effect("matches the known-answer vector from the Standard Webhooks test suite", () =>
    Effect.sync(() => {
      const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
      const body = "{\"test\": 2432232314}"
      const headers = signatureHeaders({ secret, id: "msg_p5jXN8AQM9LWM0D4loKWxJek", timestampSeconds: 1614265330, body })
      expect(headers).toEqual({
        "webhook-id": "msg_p5jXN8AQM9LWM0D4loKWxJek",
        "webhook-timestamp": "1614265330",
        "webhook-signature": "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
      })
      expect(verify(secret, headers, body)).toBe(true)
    }))

  it.effect("matches a signature computed by hand over id.timestamp.body", () =>
    Effect.sync(() => {
      // 32 fixed bytes 0x00..0x1f as the key.
      const key = Buffer.from(Array.from({ length: 32 }, (_, i) => i))
      const secret = `whsec_${key.toString("base64")}`
      const body = "{\"event\":\"reply.created\",\"data\":{\"text\":\"yes\"}}"
      const headers = signatureHeaders({ secret, id: "evt_01", timestampSeconds: 1700000000, body })
      const byHand = createHmac("sha256", key).update(`evt_01.1700000000.${body}`).digest("base64")
      expect(headers["webhook-signature"]).toBe(`v1,${byHand}`)
      expect(headers["webhook-timestamp"]).toBe("1700000000")
    }))

  it.effect("a fresh secret verifies; a changed body, id, timestamp or secret does not", () =>
    Effect.sync(() => {
      const secret = generateSigningSecret()
      const body = "{\"ok\":true}"
      const headers = signatureHeaders({ secret, id: "msg_1", timestampSeconds: 1750000000, body })
      expect(verify(secret, headers, body)).toBe(true)
      expect(verify(secret, headers, "{\"ok\":false}")).toBe(false)
      expect(verify(secret, { ...headers, "webhook-id": "msg_2" }, body)).toBe(false)
      expect(verify(secret, { ...headers, "webhook-timestamp": "1750000001" }, body)).toBe(false)
      expect(verify(generateSigningSecret(), headers, body)).toBe(false)
    }))
})
