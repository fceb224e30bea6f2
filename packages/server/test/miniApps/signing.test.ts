/**
 * Package signatures: every package's `signature` verifies with plain
 * `node:crypto` against a key listed by GET /mini-apps/keys, also after a
 * rotation (run in-process through the service `herald admin keys rotate`
 * calls), and a rotation leaves exactly one current key.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { createPublicKey, verify } from "node:crypto"
import { Signing } from "../../src/miniApps/Signing.ts"
import { makeAgent, TestServerLayer } from "../../../../test/support/server.ts"
import { archiveFor, publishRaw } from "./support.ts"

type Key = { keyId: string; algorithm: string; publicKey: string; createdAt: string; retiredAt: string | null }
type Pkg = { packageId: string; archiveSha256: string; archiveBytes: number; signature: string }

/** Whether `key` verifies `pkg`'s signature, with nothing but node:crypto. */
const verifies = (key: Key, pkg: Pkg, data = `${pkg.packageId}.${pkg.archiveSha256}.${pkg.archiveBytes}`) =>
  verify(
    null,
    Buffer.from(data, "utf8"),
    createPublicKey({ key: { kty: "OKP", crv: "Ed25519", x: key.publicKey }, format: "jwk" }),
    Buffer.from(pkg.signature, "base64url")
  )

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("mini-app signing", (it) => {
  it.effect("a signature verifies with the listed key, and still after a rotation; a new package uses the new key", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["apps:read", "apps:write"])
      const before = (yield* publishRaw(agent.secret, JSON.stringify(archiveFor(agent.person.id)))).body as Pkg
      const keys1 = (yield* agent.client.miniApps.keys()).keys as ReadonlyArray<Key>
      const current1 = keys1.find((k) => k.retiredAt === null)!
      assert.strictEqual(current1.algorithm, "Ed25519")
      assert.strictEqual(Buffer.from(current1.publicKey, "base64url").byteLength, 32)
      assert.isTrue(verifies(current1, before))
      // The signature covers the package's id, digest and size: any other text fails.
      assert.isFalse(verifies(current1, before, `${before.packageId}.${before.archiveSha256}.${before.archiveBytes + 1}`))

      const rotated = yield* Effect.flatMap(Signing, (signing) => signing.rotate)
      assert.notStrictEqual(rotated.keyId, current1.keyId)
      assert.isNull(rotated.retiredAt)

      const after = (yield* publishRaw(agent.secret, JSON.stringify(archiveFor(agent.person.id)))).body as Pkg
      const keys2 = (yield* agent.client.miniApps.keys()).keys as ReadonlyArray<Key>
      const old = keys2.find((k) => k.keyId === current1.keyId)!
      const current2 = keys2.filter((k) => k.retiredAt === null)
      assert.deepStrictEqual(current2.map((k) => k.keyId), [rotated.keyId])
      assert.isNotNull(old.retiredAt)
      assert.strictEqual(old.publicKey, current1.publicKey)
      // Newest first.
      assert.strictEqual(keys2[0]!.keyId, rotated.keyId)
      assert.isTrue(verifies(old, before))
      assert.isFalse(verifies(current2[0]!, before))
      assert.isTrue(verifies(current2[0]!, after))
      assert.isFalse(verifies(old, after))
      // The old package reads the same after the rotation.
      const reread = yield* agent.client.miniApps.get({ params: { packageId: before.packageId } })
      assert.strictEqual(reread.signature, before.signature)
    }))

  it.effect("concurrent rotations and first signatures leave exactly one current key", () =>
    Effect.gen(function*() {
      const signing = yield* Signing
      yield* Effect.all([signing.rotate, signing.rotate, signing.rotate, signing.sign("pkg_x", "0".repeat(64), 1)], {
        concurrency: "unbounded"
      })
      const sql = yield* SqlClient.SqlClient
      const [row] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM mini_app_keys WHERE retired_at IS NULL`
      assert.strictEqual(row!.n, 1)
      const keys = yield* signing.keys
      assert.strictEqual(keys.filter((k) => k.retiredAt === null).length, 1)
    }))
})
