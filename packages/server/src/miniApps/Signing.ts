/**
 * The service's Ed25519 package signing keys (decisions.md), kept in
 * `mini_app_keys`: the public key as base64url of its raw 32 bytes (the JWK
 * `x`, what GET /mini-apps/keys lists), the private key as PKCS#8 DER in
 * base64. One key is current (`retired_at` null, a unique partial index); the
 * first is made on first need, and concurrent first needs converge on one
 * (the losing insert does nothing and both read the winner). A rotation
 * retires the current key and makes a new one; retired keys stay listed so
 * the signatures they made still verify, and `verify` checks a signature as a
 * phone would: against every listed key.
 */
import { MiniAppSigningKey } from "@herald/api"
import { Context, Effect, Layer, Option } from "effect"
import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, sign, verify } from "node:crypto"
import { SigningKeysRepo } from "./SigningKeysRepo.ts"
import type { SigningKeyRow as KeyRow } from "./SigningKeysRepo.ts"

/** What a package's signature covers (decisions.md). */
export const signedText = (packageId: string, archiveSha256: string, archiveBytes: number) =>
  `${packageId}.${archiveSha256}.${archiveBytes}`

/** A fresh key's row: a random id, the raw public key (JWK `x`) and the PKCS#8 private key. */
const newKey = () => {
  const { privateKey, publicKey } = generateKeyPairSync("ed25519")
  const x = publicKey.export({ format: "jwk" }).x!
  return {
    keyId: `mak_${randomBytes(12).toString("hex")}`,
    publicKey: x,
    privateKey: privateKey.export({ format: "der", type: "pkcs8" }).toString("base64")
  }
}

const toRecord = (row: KeyRow) =>
  new MiniAppSigningKey({
    keyId: row.keyId,
    algorithm: row.algorithm,
    publicKey: row.publicKey,
    createdAt: row.createdAt,
    retiredAt: row.retiredAt
  })

export class Signing extends Context.Service<Signing, {
  /** Every key, newest first (the current one and the retired ones). */
  readonly keys: Effect.Effect<ReadonlyArray<MiniAppSigningKey>>
  /** Signs `{packageId}.{archiveSha256}.{archiveBytes}` with the current key (made if none): base64url, and the key's id. */
  readonly sign: (
    packageId: string,
    archiveSha256: string,
    archiveBytes: number
  ) => Effect.Effect<{ readonly signature: string; readonly keyId: string }>
  /** Retires the current key (if any) and makes a new current one; answers the new key. */
  readonly rotate: Effect.Effect<MiniAppSigningKey>
  /** The listed key under which `signature` verifies `{packageId}.{archiveSha256}.{archiveBytes}`; none when no key does. */
  readonly verify: (
    packageId: string,
    archiveSha256: string,
    archiveBytes: number,
    signature: string
  ) => Effect.Effect<Option.Option<MiniAppSigningKey>>
}>()("herald/Signing") {
  static readonly layer = Layer.effect(Signing, Effect.gen(function*() {
    const repo = yield* SigningKeysRepo

    const current: Effect.Effect<KeyRow> = Effect.gen(function*() {
      const found = yield* repo.findCurrent
      if (Option.isSome(found)) return found.value
      // Race-safe: a concurrent first need inserts too; the unique one-current index keeps one.
      yield* repo.insert(newKey(), { ifNoneCurrent: true })
      return yield* repo.findCurrent.pipe(Effect.map(Option.getOrThrow))
    })

    // Private keys are parsed once per key id, not per signature.
    const parsed = new Map<string, ReturnType<typeof createPrivateKey>>()
    const privateKeyOf = (row: KeyRow) => {
      let key = parsed.get(row.keyId)
      if (key === undefined) {
        key = createPrivateKey({ key: Buffer.from(row.privateKey, "base64"), format: "der", type: "pkcs8" })
        parsed.set(row.keyId, key)
      }
      return key
    }

    const keys = Effect.map(repo.all, (rows) => rows.map(toRecord))

    // Only the public half is used, as a phone holding GET /mini-apps/keys would.
    const verifies = (key: MiniAppSigningKey, text: Buffer, signature: Buffer) => {
      try {
        return verify(null, text, createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: key.publicKey }, format: "jwk" }), signature)
      } catch {
        return false
      }
    }

    return Signing.of({
      keys,
      verify: (packageId, archiveSha256, archiveBytes, signature) =>
        Effect.map(keys, (listed) => {
          const text = Buffer.from(signedText(packageId, archiveSha256, archiveBytes), "utf8")
          const bytes = Buffer.from(signature, "base64url")
          return Option.fromNullishOr(listed.find((key) => verifies(key, text, bytes)))
        }),
      sign: (packageId, archiveSha256, archiveBytes) =>
        Effect.map(current, (row) => ({
          keyId: row.keyId,
          signature: sign(null, Buffer.from(signedText(packageId, archiveSha256, archiveBytes), "utf8"), privateKeyOf(row))
            .toString("base64url")
        })),
      rotate: repo.inTransaction(Effect.gen(function*() {
        // Serialize rotations: the second waits and retires the first's new key.
        yield* repo.lockForRotation
        yield* repo.retireCurrent
        yield* repo.insert(newKey(), { ifNoneCurrent: false })
        return yield* repo.findCurrent.pipe(Effect.map(Option.getOrThrow))
      })).pipe(Effect.map(toRecord))
    })
  })).pipe(Layer.provide(SigningKeysRepo.layer))
}
