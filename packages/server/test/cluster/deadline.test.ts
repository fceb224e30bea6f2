/**
 * The shared persisted deadline keeps the wire form of the timers stored by
 * the release before it (`herald/PromptExpireAt`, `herald/ActivityExpireAt`:
 * `{expiresAtMillis}` on a persisted `Expire`, primary key `"expire"`), so a
 * timer stored before an upgrade still fires after it, on the real cluster
 * runtime and message storage; and a page can hold one deadline per step.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import { DateTime, Deferred, Effect, Layer, PrimaryKey, Schema } from "effect"
import { ClusterSchema, DeliverAt, Entity } from "effect/cluster"
import { Rpc } from "effect/rpc"
import { SqlClient } from "effect/sql"
import { randomBytes } from "node:crypto"
import { TestSqlLayer } from "../../../../test/support/database.ts"
import { ClusterLayer } from "../../src/cluster/Cluster.ts"
import { Deadline, deadlineRpc } from "../../src/cluster/Deadline.ts"

/** The previous release's prompt timer, verbatim: what its stored messages were encoded with. */
class PromptExpireAt extends Schema.Class<PromptExpireAt>("herald/PromptExpireAt")({
  expiresAtMillis: Schema.Number
}) {
  [PrimaryKey.symbol]() {
    return "expire"
  }
  [DeliverAt.symbol]() {
    return DateTime.makeUnsafe(this.expiresAtMillis)
  }
}

const OldProtocol = Entity.make("DeadlineUpgrade", [
  Rpc.make("Expire", { payload: PromptExpireAt }).annotate(ClusterSchema.Persisted, true)
])
const NewProtocol = Entity.make("DeadlineUpgrade", [deadlineRpc("Expire")])

const encode = Schema.encodeSync(Deadline)
const decode = Schema.decodeUnknownSync(Deadline)

describe("Deadline", () => {
  it("encodes to the stored form of the previous release's timers, and decodes it", () => {
    const at = Date.UTC(2026, 10, 25, 20, 0, 0)
    assert.deepStrictEqual(encode(Deadline.at(at)), Schema.encodeSync(PromptExpireAt)(new PromptExpireAt({ expiresAtMillis: at })))
    assert.deepStrictEqual(JSON.parse(JSON.stringify(encode(Deadline.at(new Date(at).toISOString())))), { expiresAtMillis: at })
    const old = decode({ expiresAtMillis: at })
    assert.strictEqual(PrimaryKey.value(old), "expire")
    assert.strictEqual(DateTime.toEpochMillis(old.dueAt), at)
    assert.strictEqual(DeliverAt.toMillis(old), at)
  })

  it("a keyed deadline has its own primary key (one per escalation step)", () => {
    const step = Deadline.at(1_000, "step-2")
    assert.strictEqual(PrimaryKey.value(step), "step-2")
    assert.deepStrictEqual(encode(step), { expiresAtMillis: 1_000, key: "step-2" })
    assert.strictEqual(PrimaryKey.value(decode(encode(step))), "step-2")
  })
})

layer(TestSqlLayer, { excludeTestServices: true, timeout: "60 seconds" })("Deadline across an upgrade", (it) => {
  it.effect("a timer stored by the previous release fires after the upgrade, and a re-send deduplicates against it", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const id = `up_${randomBytes(6).toString("hex")}`
      const dueAt = Date.now() + 1_500
      const stored = sql<{ n: number }>`
        SELECT count(*)::int AS n FROM cluster_messages WHERE entity_type = 'DeadlineUpgrade' AND entity_id = ${id}`.pipe(
        Effect.map((rows) => rows[0]!.n)
      )

      // The previous release stores the timer, then stops before it is due.
      const oldFired = yield* Deferred.make<void>()
      const OldLive = OldProtocol.toLayer({ Expire: () => Effect.asVoid(Deferred.succeed(oldFired, undefined)) })
      yield* Effect.scoped(Effect.gen(function*() {
        const client = yield* OldProtocol.client
        yield* client(id).Expire(new PromptExpireAt({ expiresAtMillis: dueAt }), { discard: true })
      }).pipe(Effect.provide(OldLive.pipe(Layer.provideMerge(ClusterLayer)))))
      assert.strictEqual(yield* stored, 1)

      // This release starts on the same storage; a re-send of the same deadline adds nothing.
      const fired = yield* Deferred.make<Deadline>()
      const NewLive = NewProtocol.toLayer({ Expire: ({ payload }) => Effect.asVoid(Deferred.succeed(fired, payload)) })
      const delivered = yield* Effect.scoped(Effect.gen(function*() {
        const client = yield* NewProtocol.client
        yield* client(id).Expire(Deadline.at(dueAt), { discard: true })
        assert.strictEqual(yield* stored, 1)
        return yield* Deferred.await(fired)
      }).pipe(Effect.provide(NewLive.pipe(Layer.provideMerge(ClusterLayer)))))

      assert.instanceOf(delivered, Deadline)
      assert.strictEqual(delivered.expiresAtMillis, dueAt)
      assert.isFalse(yield* Deferred.isDone(oldFired))
      assert.isAtLeast(Date.now(), dueAt)
    }))
})
