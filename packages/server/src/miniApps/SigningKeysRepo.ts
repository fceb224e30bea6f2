/**
 * SQL of the mini-app package signing keys in `mini_app_keys`
 * (miniApps/Signing.ts holds the rules): one current key (`retired_at` null,
 * a unique partial index) and the retired ones, kept so their signatures
 * still verify.
 */
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { keyTable } from "../db/KeyTable.ts"
import type { KeyTable, NewKeyRow } from "../db/KeyTable.ts"

export const SigningKeyRow = Schema.Struct({
  keyId: Schema.String,
  algorithm: Schema.Literal("Ed25519"),
  publicKey: Schema.String,
  privateKey: Schema.String,
  createdAt: Schema.String,
  retiredAt: Schema.NullOr(Schema.String)
})
export type SigningKeyRow = typeof SigningKeyRow.Type

/** A key to store: the raw public key (JWK `x`) and the PKCS#8 DER private key in base64. */
export type NewSigningKeyRow = NewKeyRow

export class SigningKeysRepo extends Context.Service<SigningKeysRepo, KeyTable<SigningKeyRow>>()("herald/SigningKeysRepo") {
  static readonly layer = Layer.effect(SigningKeysRepo, Effect.map(SqlClient.SqlClient, (sql) =>
    SigningKeysRepo.of(keyTable(sql, "mini_app_keys", "key_id, algorithm, public_key, private_key, created_at, retired_at", SigningKeyRow))))
}
