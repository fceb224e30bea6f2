/**
 * Connector callbacks. The callback secret is an HMAC key Herald must use, so
 * it cannot be hashed: it is sealed with AES-256-GCM under a server key
 * (`ServerSecrets`, shared by every node), bound to its connector's id, and
 * opened only here, to check a gateway's `callback-access` signature:
 * base64 HMAC-SHA256 of `{deliveryId}.{timestamp}.{bodySha256}` keyed with
 * the secret's UTF-8 bytes, a timestamp within 5 minutes of the service's
 * clock, and a recorded delivery of this connector used at most once.
 */
import { CallbackAccess, CallbackInvalid, connectorPathProblem, NotFound } from "@herald/api"
import type { CallbackAccessRequest } from "@herald/api"
import { Clock, Context, Effect, Layer } from "effect"
import { createCipheriv, createDecipheriv, createHmac, randomBytes, timingSafeEqual } from "node:crypto"
import { ServerSecrets } from "../db/ServerSecrets.ts"
import { ConnectorsRepo } from "./ConnectorsRepo.ts"

/** The `ServerSecrets` name of the key that seals callback secrets. */
const SEALING_KEY = "connector-callback-secrets"
/** decisions.md: a callback's timestamp within 5 minutes of the service's clock. */
export const CALLBACK_WINDOW_SECONDS = 300

/** A fresh callback secret: `hcb_` and 256 random bits, base64url. */
export const generateCallbackSecret = (): string => `hcb_${randomBytes(32).toString("base64url")}`

/** `v1.` + base64url(iv ‖ tag ‖ ciphertext); the connector id is the additional data. */
export const seal = (keyHex: string, connectorId: string, secret: string): string => {
  const iv = randomBytes(12)
  const cipher = createCipheriv("aes-256-gcm", Buffer.from(keyHex, "hex"), iv)
  cipher.setAAD(Buffer.from(connectorId, "utf8"))
  const ciphertext = Buffer.concat([cipher.update(secret, "utf8"), cipher.final()])
  return `v1.${Buffer.concat([iv, cipher.getAuthTag(), ciphertext]).toString("base64url")}`
}

export const unseal = (keyHex: string, connectorId: string, sealed: string): string => {
  const raw = Buffer.from(sealed.slice(3), "base64url")
  const decipher = createDecipheriv("aes-256-gcm", Buffer.from(keyHex, "hex"), raw.subarray(0, 12))
  decipher.setAAD(Buffer.from(connectorId, "utf8"))
  decipher.setAuthTag(raw.subarray(12, 28))
  return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8")
}

/** The signature a gateway sends for a delivery (exported for tests and gateway authors). */
export const callbackSignature = (secret: string, deliveryId: string, timestamp: number, bodySha256: string): string =>
  createHmac("sha256", Buffer.from(secret, "utf8")).update(`${deliveryId}.${timestamp}.${bodySha256}`).digest("base64")

const sameSignature = (given: string, expected: string): boolean => {
  const a = Buffer.from(given, "utf8")
  const b = Buffer.from(expected, "utf8")
  return a.length === b.length && timingSafeEqual(a, b)
}

const notFound = new NotFound({ error: "Connector not found." })

export class Callbacks extends Context.Service<Callbacks, {
  /** Seals a new secret for the connector. */
  readonly sealFor: (connectorId: string, secret: string) => Effect.Effect<string>
  readonly authorize: (userId: string, connectorId: string, input: CallbackAccessRequest) => Effect.Effect<
    CallbackAccess,
    NotFound | CallbackInvalid
  >
}>()("herald/Callbacks") {
  static readonly layerNoDeps = Layer.effect(Callbacks, Effect.gen(function*() {
    const repo = yield* ConnectorsRepo
    const secrets = yield* ServerSecrets

    const authorize = Effect.fn("Callbacks.authorize")(function*(userId: string, connectorId: string, input: CallbackAccessRequest) {
      const sealed = yield* repo.sealedSecret(userId, connectorId)
      if (sealed === undefined) return yield* notFound
      const refuse = (why: string) => new CallbackInvalid({ error: `The callback is refused: ${why}.` })
      const secret = unseal(yield* secrets.key(SEALING_KEY), connectorId, sealed)
      const expected = callbackSignature(secret, input.deliveryId, input.timestamp, input.bodySha256)
      if (!sameSignature(input.signature, expected)) return yield* refuse("the signature does not match")
      const now = yield* Clock.currentTimeMillis
      if (Math.abs(now / 1000 - input.timestamp) > CALLBACK_WINDOW_SECONDS) {
        return yield* refuse("the timestamp is more than 5 minutes off")
      }
      const path = yield* repo.useDelivery(connectorId, input.deliveryId, input.bodySha256, new Date(now).toISOString())
      if (path === undefined) return yield* refuse("no unused delivery of this connector has that id and body")
      // A path recorded before dot segments and encoded separators were refused is never handed to a gateway.
      const unsound = connectorPathProblem(path)
      if (unsound !== undefined) return yield* refuse(unsound)
      return new CallbackAccess({ path })
    })

    return Callbacks.of({
      sealFor: (connectorId, secret) => Effect.map(secrets.key(SEALING_KEY), (key) => seal(key, connectorId, secret)),
      authorize
    })
  }))
}
