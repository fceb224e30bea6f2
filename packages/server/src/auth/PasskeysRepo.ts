/**
 * SQL of passkeys (migrations/0019_sign_in.ts): a person's WebAuthn
 * credentials, found for sign-in by the credential id the browser returns and
 * otherwise always scoped by `user_id`. The public key is kept as base64url
 * text (COSE), the signature counter as the authenticator last reported it.
 */
import { Passkey } from "@herald/api"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import type { SqlError } from "effect/sql"

export const StoredPasskey = Schema.Struct({
  id: Schema.String,
  userId: Schema.String,
  credentialId: Schema.String,
  publicKey: Schema.String,
  // bigint arrives as text from node-postgres.
  counter: Schema.NumberFromString,
  transports: Schema.Array(Schema.String)
})
export type StoredPasskey = typeof StoredPasskey.Type

export interface NewPasskey {
  readonly id: string
  readonly userId: string
  readonly credentialId: string
  readonly publicKey: string
  readonly counter: number
  readonly transports: ReadonlyArray<string>
  readonly name: string
}

const passkeyColumns = (sql: SqlClient.SqlClient) => sql`id, name, created_at, last_used_at`

export class PasskeysRepo extends Context.Service<PasskeysRepo, {
  /** Stores a passkey unless the person already has `max`; none when full. A taken credential id fails with the unique violation. */
  readonly insert: (passkey: NewPasskey, max: number) => Effect.Effect<Option.Option<Passkey>, SqlError.SqlError>
  readonly list: (userId: string) => Effect.Effect<ReadonlyArray<Passkey>>
  /** The credential ids of the person's passkeys (to exclude at registration). */
  readonly credentialIds: (userId: string) => Effect.Effect<ReadonlyArray<{ credentialId: string; transports: ReadonlyArray<string> }>>
  readonly findByCredentialId: (credentialId: string) => Effect.Effect<Option.Option<StoredPasskey>>
  /** Records a sign-in: the new counter, when the stored one is still `previous` (a concurrent use loses). */
  readonly markUsed: (id: string, previous: number, counter: number) => Effect.Effect<boolean>
  readonly remove: (userId: string, id: string) => Effect.Effect<boolean>
}>()("herald/PasskeysRepo") {
  static readonly layer = Layer.effect(PasskeysRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    // The count and the insert in one statement, under the person's row lock, so two registrations
    // racing for the last place cannot both get it.
    const insert = SqlSchema.findOneOption({
      Request: Schema.Struct({
        id: Schema.String,
        userId: Schema.String,
        credentialId: Schema.String,
        publicKey: Schema.String,
        counter: Schema.Number,
        transports: Schema.Array(Schema.String),
        name: Schema.String,
        max: Schema.Int
      }),
      Result: Passkey,
      execute: (p) =>
        sql`WITH person AS (SELECT id FROM users WHERE id = ${p.userId} FOR UPDATE)
            INSERT INTO passkeys (id, user_id, credential_id, public_key, counter, transports, name)
            SELECT ${p.id}, person.id, ${p.credentialId}, ${p.publicKey}, ${p.counter}, ${p.transports}::text[], ${p.name}
            FROM person
            WHERE (SELECT count(*) FROM passkeys WHERE user_id = ${p.userId}) < ${p.max}
            RETURNING ${passkeyColumns(sql)}`
    })

    const list = SqlSchema.findAll({
      Request: Schema.String,
      Result: Passkey,
      execute: (userId) => sql`SELECT ${passkeyColumns(sql)} FROM passkeys WHERE user_id = ${userId} ORDER BY created_at DESC, id DESC`
    })

    const credentialIds = SqlSchema.findAll({
      Request: Schema.String,
      Result: Schema.Struct({ credentialId: Schema.String, transports: Schema.Array(Schema.String) }),
      execute: (userId) => sql`SELECT credential_id, transports FROM passkeys WHERE user_id = ${userId}`
    })

    const findByCredentialId = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: StoredPasskey,
      execute: (credentialId) =>
        sql`SELECT id, user_id, credential_id, public_key, counter::text AS counter, transports
            FROM passkeys WHERE credential_id = ${credentialId}`
    })

    const markUsed = SqlSchema.findOneOption({
      Request: Schema.Struct({ id: Schema.String, previous: Schema.Number, counter: Schema.Number }),
      Result: Schema.Struct({ id: Schema.String }),
      execute: ({ counter, id, previous }) =>
        sql`UPDATE passkeys SET counter = ${counter}, last_used_at = now()
            WHERE id = ${id} AND counter = ${previous} RETURNING id`
    })

    const remove = SqlSchema.findOneOption({
      Request: Schema.Struct({ userId: Schema.String, id: Schema.String }),
      Result: Schema.Struct({ id: Schema.String }),
      execute: ({ id, userId }) => sql`DELETE FROM passkeys WHERE id = ${id} AND user_id = ${userId} RETURNING id`
    })

    return PasskeysRepo.of({
      insert: (p, max) => insert({ ...p, max }).pipe(Effect.catchTag("SchemaError", Effect.die)),
      list: (userId) => list(userId).pipe(Effect.orDie),
      credentialIds: (userId) => credentialIds(userId).pipe(Effect.orDie),
      findByCredentialId: (credentialId) => findByCredentialId(credentialId).pipe(Effect.orDie),
      markUsed: (id, previous, counter) => markUsed({ id, previous, counter }).pipe(Effect.map(Option.isSome), Effect.orDie),
      remove: (userId, id) => remove({ userId, id }).pipe(Effect.map(Option.isSome), Effect.orDie)
    })
  }))
}
