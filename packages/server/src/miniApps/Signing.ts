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
import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, sign, verify } from "node:crypto"

const KeyRow = Schema.Struct({
  keyId: Schema.String,
  algorithm: Schema.Literal("Ed25519"),
  publicKey: Schema.String,
  privateKey: Schema.String,
  createdAt: Schema.String,
  retiredAt: Schema.NullOr(Schema.String)
})
type KeyRow = typeof KeyRow.Type

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
}>()("herald/miniApps/Signing") {
  static readonly layer = Layer.effect(Signing, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = sql`key_id, algorithm, public_key, private_key, created_at, retired_at`

    const findCurrent = SqlSchema.findOneOption({
      Request: Schema.Void,
      Result: KeyRow,
      execute: () => sql`SELECT ${columns} FROM mini_app_keys WHERE retired_at IS NULL`
    })
    const insert = (key: ReturnType<typeof newKey>, onConflictNothing: boolean) =>
      sql`INSERT INTO mini_app_keys (key_id, public_key, private_key)
          VALUES (${key.keyId}, ${key.publicKey}, ${key.privateKey})
          ${onConflictNothing ? sql`ON CONFLICT DO NOTHING` : sql``}`

    const current: Effect.Effect<KeyRow> = Effect.gen(function*() {
      const found = yield* findCurrent(undefined)
      if (Option.isSome(found)) return found.value
      // Race-safe: a concurrent first need inserts too; the unique one-current index keeps one.
      yield* insert(newKey(), true)
      return yield* findCurrent(undefined).pipe(Effect.map(Option.getOrThrow))
    }).pipe(Effect.orDie)

    const all = SqlSchema.findAll({
      Request: Schema.Void,
      Result: KeyRow,
      execute: () => sql`SELECT ${columns} FROM mini_app_keys ORDER BY created_at DESC, key_id DESC`
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

    const keys = all(undefined).pipe(Effect.map((rows) => rows.map(toRecord)), Effect.orDie)

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
      rotate: sql.withTransaction(Effect.gen(function*() {
        // Serialize rotations: the second waits and retires the first's new key.
        yield* sql`LOCK TABLE mini_app_keys IN SHARE ROW EXCLUSIVE MODE`
        yield* sql`UPDATE mini_app_keys SET retired_at = now() WHERE retired_at IS NULL`
        const key = newKey()
        yield* insert(key, false)
        return yield* findCurrent(undefined).pipe(Effect.map(Option.getOrThrow))
      })).pipe(Effect.map(toRecord), Effect.orDie)
    })
  }))
}
