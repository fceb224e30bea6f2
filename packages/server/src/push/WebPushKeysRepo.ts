/**
 * SQL of the VAPID key pairs in `web_push_keys` (push/WebPushKeys.ts holds
 * the rules): one current key (`retired_at` null, a unique partial index),
 * retired keys kept on record, and the browser devices a rotation deactivates.
 */
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { keyTable } from "../db/KeyTable.ts"
import type { KeyTable, NewKeyRow } from "../db/KeyTable.ts"

export const VapidKeyRow = Schema.Struct({
  keyId: Schema.String,
  publicKey: Schema.String,
  privateKey: Schema.String,
  createdAt: Schema.String,
  retiredAt: Schema.NullOr(Schema.String)
})
export type VapidKeyRow = typeof VapidKeyRow.Type

/** A key to store: base64url of the public point and of the private scalar. */
export type NewVapidKeyRow = NewKeyRow

export class WebPushKeysRepo extends Context.Service<WebPushKeysRepo, KeyTable<VapidKeyRow> & {
  /** Marks every active browser device inactive; answers how many. */
  readonly deactivateBrowsers: Effect.Effect<number>
}>()("herald/WebPushKeysRepo") {
  static readonly layer = Layer.effect(WebPushKeysRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const deactivateBrowsers = SqlSchema.findAll({
      Request: Schema.Void,
      Result: Schema.Struct({ id: Schema.String }),
      execute: () => sql`UPDATE devices SET active = false, updated_at = now() WHERE platform = 'web' AND active RETURNING id`
    })

    return WebPushKeysRepo.of({
      ...keyTable(sql, "web_push_keys", "key_id, public_key, private_key, created_at, retired_at", VapidKeyRow),
      deactivateBrowsers: deactivateBrowsers(undefined).pipe(Effect.map((rows) => rows.length), Effect.orDie)
    })
  }))
}
