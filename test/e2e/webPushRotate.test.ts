/**
 * `herald admin webpush rotate` as an operator runs it: each run prints a new
 * current VAPID key (an uncompressed P-256 point), retires the one before,
 * says that browsers must subscribe again, and marks the browsers subscribed
 * with the old key inactive.
 */
import { assert, describe, it } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { embeddedClientLayer, postgresLayer } from "../../packages/server/src/db/Database.ts"
import { serveEmbedded } from "../../packages/server/src/db/Embedded.ts"
import { childDatabase } from "../support/database.ts"
import type { TestDatabase } from "../support/database.ts"
import { cliJson } from "../support/process.ts"

const openDatabase = (database: TestDatabase) =>
  database.kind === "postgres"
    ? postgresLayer(Redacted.make(database.env.DATABASE_URL!), 1)
    : Layer.unwrap(Effect.map(Effect.orDie(serveEmbedded(database.env.HERALD_DATA_DIR!)), embeddedClientLayer))

type Rotated = {
  keyId: string
  publicKey: string
  createdAt: string
  retiredAt: string | null
  deactivatedDevices: number
  note: string
}

describe("herald admin webpush rotate", () => {
  it.effect("prints a new current key, retires the one before and retires the browsers subscribed with it", () =>
    Effect.gen(function*() {
      const database = yield* childDatabase
      const first = yield* cliJson<Rotated>(["admin", "webpush", "rotate"], database.env)
      assert.strictEqual(first.deactivatedDevices, 0)
      const inDatabase = <A>(effect: Effect.Effect<A, unknown, SqlClient.SqlClient>) =>
        effect.pipe(Effect.provide(openDatabase(database)), Effect.scoped, Effect.orDie)
      yield* inDatabase(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`INSERT INTO users (id, email, name) VALUES ('usr_rotate', 'rotate@example.test', 'r')`
        yield* sql`INSERT INTO devices (id, user_id, platform, push_token, web_push_p256dh, web_push_auth)
                   VALUES ('dev_browser', 'usr_rotate', 'web', 'https://push.example.test/s/1', 'B', 'a'),
                          ('dev_phone', 'usr_rotate', 'ios', 'phone-token', NULL, NULL)`
      }))
      const second = yield* cliJson<Rotated>(["admin", "webpush", "rotate"], database.env)
      for (const key of [first, second]) {
        assert.isNull(key.retiredAt)
        const point = Buffer.from(key.publicKey, "base64url")
        assert.deepStrictEqual([point.byteLength, point[0]], [65, 4])
        assert.match(key.note, /must subscribe again/)
      }
      assert.notStrictEqual(first.keyId, second.keyId)
      assert.strictEqual(second.deactivatedDevices, 1)
      const rows = yield* inDatabase(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const keys = yield* sql<{ keyId: string; retired: boolean }>`
          SELECT key_id, retired_at IS NOT NULL AS retired FROM web_push_keys ORDER BY created_at`
        const devices = yield* sql<{ id: string; active: boolean }>`SELECT id, active FROM devices ORDER BY id`
        return { keys, devices }
      }))
      assert.deepStrictEqual(rows.keys.map((k) => ({ ...k })), [
        { keyId: first.keyId, retired: true },
        { keyId: second.keyId, retired: false }
      ])
      assert.deepStrictEqual(rows.devices.map((d) => ({ ...d })), [
        { id: "dev_browser", active: false },
        { id: "dev_phone", active: true }
      ])
    }), { timeout: 120_000 })
})
