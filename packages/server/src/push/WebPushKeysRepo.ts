/**
 * SQL of the VAPID key pairs in `web_push_keys` (push/WebPushKeys.ts holds
 * the rules): one current key (`retired_at` null, a unique partial index),
 * retired keys kept on record, and the browser devices a rotation deactivates.
 */
import { Context, Effect, Layer, Schema } from "effect"
import type { Option } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"

export const VapidKeyRow = Schema.Struct({
  keyId: Schema.String,
  publicKey: Schema.String,
  privateKey: Schema.String,
  createdAt: Schema.String,
  retiredAt: Schema.NullOr(Schema.String)
})
export type VapidKeyRow = typeof VapidKeyRow.Type

/** A key to store: base64url of the public point and of the private scalar. */
export interface NewVapidKeyRow {
  readonly keyId: string
  readonly publicKey: string
  readonly privateKey: string
}

export class WebPushKeysRepo extends Context.Service<WebPushKeysRepo, {
  /** The current key, if one has been made. */
  readonly findCurrent: Effect.Effect<Option.Option<VapidKeyRow>>
  /** Every key, newest first. */
  readonly all: Effect.Effect<ReadonlyArray<VapidKeyRow>>
  /**
   * Stores a key as the current one. With `ifNoneCurrent` a key already current
   * wins and this does nothing (concurrent first needs converge on one).
   */
  readonly insert: (key: NewVapidKeyRow, options: { readonly ifNoneCurrent: boolean }) => Effect.Effect<void>
  /** Locks the table for the rest of the transaction: rotations take turns. */
  readonly lockForRotation: Effect.Effect<void>
  /** Retires the current key (if any). */
  readonly retireCurrent: Effect.Effect<void>
  /** Marks every active browser device inactive; answers how many. */
  readonly deactivateBrowsers: Effect.Effect<number>
  /** Runs `effect` in one transaction (a rotation). */
  readonly inTransaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}>()("herald/WebPushKeysRepo") {
  static readonly layer = Layer.effect(WebPushKeysRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = sql`key_id, public_key, private_key, created_at, retired_at`

    const findCurrent = SqlSchema.findOneOption({
      Request: Schema.Void,
      Result: VapidKeyRow,
      execute: () => sql`SELECT ${columns} FROM web_push_keys WHERE retired_at IS NULL`
    })
    const all = SqlSchema.findAll({
      Request: Schema.Void,
      Result: VapidKeyRow,
      execute: () => sql`SELECT ${columns} FROM web_push_keys ORDER BY created_at DESC, key_id DESC`
    })
    const deactivateBrowsers = SqlSchema.findAll({
      Request: Schema.Void,
      Result: Schema.Struct({ id: Schema.String }),
      execute: () => sql`UPDATE devices SET active = false, updated_at = now() WHERE platform = 'web' AND active RETURNING id`
    })

    return WebPushKeysRepo.of({
      findCurrent: findCurrent(undefined).pipe(Effect.orDie),
      all: all(undefined).pipe(Effect.orDie),
      insert: (key, { ifNoneCurrent }) =>
        sql`INSERT INTO web_push_keys (key_id, public_key, private_key)
            VALUES (${key.keyId}, ${key.publicKey}, ${key.privateKey})
            ${ifNoneCurrent ? sql`ON CONFLICT DO NOTHING` : sql``}`.pipe(Effect.asVoid, Effect.orDie),
      lockForRotation: sql`LOCK TABLE web_push_keys IN SHARE ROW EXCLUSIVE MODE`.pipe(Effect.asVoid, Effect.orDie),
      retireCurrent: sql`UPDATE web_push_keys SET retired_at = now() WHERE retired_at IS NULL`.pipe(Effect.asVoid, Effect.orDie),
      deactivateBrowsers: deactivateBrowsers(undefined).pipe(Effect.map((rows) => rows.length), Effect.orDie),
      inTransaction: (effect) => sql.withTransaction(effect).pipe(Effect.catchTag("SqlError", Effect.die))
    })
  }))
}
