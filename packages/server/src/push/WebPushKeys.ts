/**
 * The service's VAPID key pairs (RFC 8292), kept in `web_push_keys` exactly
 * as the mini-app signing keys are (miniApps/Signing.ts): made on first need,
 * one current (a unique partial index; concurrent first needs converge on
 * one), a rotation retires it and makes a new one, and retired keys stay on
 * record. Web Push needs no operator credentials: this key is the server's
 * identity at every push service. A browser subscribes with the public key,
 * and its push service refuses (403) a push signed with any other, so a
 * rotation also marks every browser device inactive: each must subscribe
 * again with the new key, which registers it anew (docs/operations.md).
 */
import { Clock, Context, Effect, Layer, Option, Ref, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { generateKeyPairSync, randomBytes } from "node:crypto"

const KeyRow = Schema.Struct({
  keyId: Schema.String,
  publicKey: Schema.String,
  privateKey: Schema.String,
  createdAt: Schema.String,
  retiredAt: Schema.NullOr(Schema.String)
})
type KeyRow = typeof KeyRow.Type

/** A key pair as web-push takes it: base64url of the uncompressed public point (65 bytes) and of the private scalar (32). */
export interface VapidKey {
  readonly keyId: string
  readonly publicKey: string
  readonly privateKey: string
}

/** A key as the operator sees it (never the private half). */
export interface VapidKeyRecord {
  readonly keyId: string
  readonly publicKey: string
  readonly createdAt: string
  readonly retiredAt: string | null
}

/** A fresh P-256 key pair, encoded for web-push. */
export const newVapidKey = (): VapidKey => {
  const { privateKey, publicKey } = generateKeyPairSync("ec", { namedCurve: "prime256v1" })
  const jwk = publicKey.export({ format: "jwk" })
  const point = Buffer.concat([Buffer.from([4]), Buffer.from(jwk.x!, "base64url"), Buffer.from(jwk.y!, "base64url")])
  return {
    keyId: `wpk_${randomBytes(12).toString("hex")}`,
    publicKey: point.toString("base64url"),
    privateKey: privateKey.export({ format: "jwk" }).d!
  }
}

const toRecord = (row: KeyRow): VapidKeyRecord => ({
  keyId: row.keyId,
  publicKey: row.publicKey,
  createdAt: row.createdAt,
  retiredAt: row.retiredAt
})

/**
 * How long a node signs with the key it last read before reading again. Pushes
 * do not each cost a query; a rotation (another process: `herald admin`) is
 * seen within this.
 */
const CURRENT_KEY_TTL_MILLIS = 5_000

export class WebPushKeys extends Context.Service<WebPushKeys, {
  /** The current key pair (made if none), as pushes are signed with it. */
  readonly current: Effect.Effect<VapidKey>
  /** The current public key, read afresh (what a browser subscribes with). */
  readonly publicKey: Effect.Effect<string>
  /**
   * Retires the current key (if any), makes a new current one and marks every
   * active browser device inactive (its subscription was made with an old key);
   * answers the new key and how many devices must subscribe again.
   */
  readonly rotate: Effect.Effect<{ readonly key: VapidKeyRecord; readonly deactivatedDevices: number }>
  /** Every key, newest first. */
  readonly keys: Effect.Effect<ReadonlyArray<VapidKeyRecord>>
}>()("herald/push/WebPushKeys") {
  static readonly layer = Layer.effect(WebPushKeys, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = sql`key_id, public_key, private_key, created_at, retired_at`

    const findCurrent = SqlSchema.findOneOption({
      Request: Schema.Void,
      Result: KeyRow,
      execute: () => sql`SELECT ${columns} FROM web_push_keys WHERE retired_at IS NULL`
    })
    const insert = (key: VapidKey, onConflictNothing: boolean) =>
      sql`INSERT INTO web_push_keys (key_id, public_key, private_key)
          VALUES (${key.keyId}, ${key.publicKey}, ${key.privateKey})
          ${onConflictNothing ? sql`ON CONFLICT DO NOTHING` : sql``}`

    const read: Effect.Effect<KeyRow> = Effect.gen(function*() {
      const found = yield* findCurrent(undefined)
      if (Option.isSome(found)) return found.value
      // Race-safe: a concurrent first need inserts too; the unique one-current index keeps one.
      yield* insert(newVapidKey(), true)
      return yield* findCurrent(undefined).pipe(Effect.map(Option.getOrThrow))
    }).pipe(Effect.orDie)

    const cached = yield* Ref.make<{ readonly row: KeyRow; readonly at: number } | undefined>(undefined)
    const current = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const hit = yield* Ref.get(cached)
      if (hit !== undefined && now - hit.at < CURRENT_KEY_TTL_MILLIS) return hit.row
      const row = yield* read
      yield* Ref.set(cached, { row, at: now })
      return row
    }).pipe(Effect.map((row): VapidKey => ({ keyId: row.keyId, publicKey: row.publicKey, privateKey: row.privateKey })))

    const all = SqlSchema.findAll({
      Request: Schema.Void,
      Result: KeyRow,
      execute: () => sql`SELECT ${columns} FROM web_push_keys ORDER BY created_at DESC, key_id DESC`
    })

    const deactivateBrowsers = SqlSchema.findAll({
      Request: Schema.Void,
      Result: Schema.Struct({ id: Schema.String }),
      execute: () => sql`UPDATE devices SET active = false, updated_at = now() WHERE platform = 'web' AND active RETURNING id`
    })

    return WebPushKeys.of({
      current,
      publicKey: Effect.map(read, (row) => row.publicKey),
      keys: all(undefined).pipe(Effect.map((rows) => rows.map(toRecord)), Effect.orDie),
      rotate: sql.withTransaction(Effect.gen(function*() {
        // Serialize rotations: the second waits and retires the first's new key.
        yield* sql`LOCK TABLE web_push_keys IN SHARE ROW EXCLUSIVE MODE`
        yield* sql`UPDATE web_push_keys SET retired_at = now() WHERE retired_at IS NULL`
        yield* insert(newVapidKey(), false)
        const deactivated = yield* deactivateBrowsers(undefined)
        const key = yield* findCurrent(undefined).pipe(Effect.map(Option.getOrThrow))
        return { key: toRecord(key), deactivatedDevices: deactivated.length }
      })).pipe(
        Effect.tap(() => Ref.set(cached, undefined)),
        Effect.orDie
      )
    })
  }))
}
