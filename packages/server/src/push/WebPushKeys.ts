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
import { Clock, Context, Effect, Layer, Option, Ref } from "effect"
import { generateKeyPairSync, randomBytes } from "node:crypto"
import { WebPushKeysRepo } from "./WebPushKeysRepo.ts"
import type { VapidKeyRow as KeyRow } from "./WebPushKeysRepo.ts"

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
}>()("herald/WebPushKeys") {
  static readonly layer = Layer.effect(WebPushKeys, Effect.gen(function*() {
    const repo = yield* WebPushKeysRepo

    const read: Effect.Effect<KeyRow> = Effect.gen(function*() {
      const found = yield* repo.findCurrent
      if (Option.isSome(found)) return found.value
      // Race-safe: a concurrent first need inserts too; the unique one-current index keeps one.
      yield* repo.insert(newVapidKey(), { ifNoneCurrent: true })
      return yield* repo.findCurrent.pipe(Effect.map(Option.getOrThrow))
    })

    const cached = yield* Ref.make<{ readonly row: KeyRow; readonly at: number } | undefined>(undefined)
    const current = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const hit = yield* Ref.get(cached)
      if (hit !== undefined && now - hit.at < CURRENT_KEY_TTL_MILLIS) return hit.row
      const row = yield* read
      yield* Ref.set(cached, { row, at: now })
      return row
    }).pipe(Effect.map((row): VapidKey => ({ keyId: row.keyId, publicKey: row.publicKey, privateKey: row.privateKey })))

    return WebPushKeys.of({
      current,
      publicKey: Effect.map(read, (row) => row.publicKey),
      keys: Effect.map(repo.all, (rows) => rows.map(toRecord)),
      rotate: repo.inTransaction(Effect.gen(function*() {
        // Serialize rotations: the second waits and retires the first's new key.
        yield* repo.lockForRotation
        yield* repo.retireCurrent
        yield* repo.insert(newVapidKey(), { ifNoneCurrent: false })
        const deactivatedDevices = yield* repo.deactivateBrowsers
        const key = yield* repo.findCurrent.pipe(Effect.map(Option.getOrThrow))
        return { key: toRecord(key), deactivatedDevices }
      })).pipe(Effect.tap(() => Ref.set(cached, undefined)))
    })
  })).pipe(Layer.provide(WebPushKeysRepo.layer))
}
