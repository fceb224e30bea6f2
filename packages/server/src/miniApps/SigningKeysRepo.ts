/**
 * SQL of the mini-app package signing keys in `mini_app_keys`
 * (miniApps/Signing.ts holds the rules): one current key (`retired_at` null,
 * a unique partial index) and the retired ones, kept so their signatures
 * still verify.
 */
import { Context, Effect, Layer, Schema } from "effect"
import type { Option } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"

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
export interface NewSigningKeyRow {
  readonly keyId: string
  readonly publicKey: string
  readonly privateKey: string
}

export class SigningKeysRepo extends Context.Service<SigningKeysRepo, {
  /** The current key, if one has been made. */
  readonly findCurrent: Effect.Effect<Option.Option<SigningKeyRow>>
  /** Every key, newest first. */
  readonly all: Effect.Effect<ReadonlyArray<SigningKeyRow>>
  /**
   * Stores a key as the current one. With `ifNoneCurrent` a key already current
   * wins and this does nothing (concurrent first needs converge on one).
   */
  readonly insert: (key: NewSigningKeyRow, options: { readonly ifNoneCurrent: boolean }) => Effect.Effect<void>
  /** Locks the table for the rest of the transaction: rotations take turns. */
  readonly lockForRotation: Effect.Effect<void>
  /** Retires the current key (if any). */
  readonly retireCurrent: Effect.Effect<void>
  /** Runs `effect` in one transaction (a rotation). */
  readonly inTransaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}>()("herald/SigningKeysRepo") {
  static readonly layer = Layer.effect(SigningKeysRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = sql`key_id, algorithm, public_key, private_key, created_at, retired_at`

    const findCurrent = SqlSchema.findOneOption({
      Request: Schema.Void,
      Result: SigningKeyRow,
      execute: () => sql`SELECT ${columns} FROM mini_app_keys WHERE retired_at IS NULL`
    })
    const all = SqlSchema.findAll({
      Request: Schema.Void,
      Result: SigningKeyRow,
      execute: () => sql`SELECT ${columns} FROM mini_app_keys ORDER BY created_at DESC, key_id DESC`
    })

    return SigningKeysRepo.of({
      findCurrent: findCurrent(undefined).pipe(Effect.orDie),
      all: all(undefined).pipe(Effect.orDie),
      insert: (key, { ifNoneCurrent }) =>
        sql`INSERT INTO mini_app_keys (key_id, public_key, private_key)
            VALUES (${key.keyId}, ${key.publicKey}, ${key.privateKey})
            ${ifNoneCurrent ? sql`ON CONFLICT DO NOTHING` : sql``}`.pipe(Effect.asVoid, Effect.orDie),
      lockForRotation: sql`LOCK TABLE mini_app_keys IN SHARE ROW EXCLUSIVE MODE`.pipe(Effect.asVoid, Effect.orDie),
      retireCurrent: sql`UPDATE mini_app_keys SET retired_at = now() WHERE retired_at IS NULL`.pipe(Effect.asVoid, Effect.orDie),
      inTransaction: (effect) => sql.withTransaction(effect).pipe(Effect.catchTag("SqlError", Effect.die))
    })
  }))
}
