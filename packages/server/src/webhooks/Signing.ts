/**
 * The Standard Webhooks signing scheme: a `whsec_` secret (base64 of 32
 * random bytes) and `v1,` + base64 HMAC-SHA256 over `id.timestamp.body`, so
 * receivers can verify events with any Standard Webhooks library.
 */
import { createHmac, randomBytes } from "node:crypto"

const PREFIX = "whsec_"

export const generateSigningSecret = (): string => PREFIX + randomBytes(32).toString("base64")

export const signatureHeaders = (options: {
  readonly secret: string
  readonly id: string
  readonly timestampSeconds: number
  readonly body: string
}): { readonly "webhook-id": string; readonly "webhook-timestamp": string; readonly "webhook-signature": string } => {
  const key = Buffer.from(options.secret.startsWith(PREFIX) ? options.secret.slice(PREFIX.length) : options.secret, "base64")
  const signed = `${options.id}.${options.timestampSeconds}.${options.body}`
  return {
    "webhook-id": options.id,
    "webhook-timestamp": String(options.timestampSeconds),
    "webhook-signature": `v1,${createHmac("sha256", key).update(signed).digest("base64")}`
  }
}
