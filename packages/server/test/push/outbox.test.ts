/**
 * The durable push outbox on a real database with the sandbox provider:
 * request-path sends, the background worker, retries to a final error, dead
 * tokens, and claims a crashed process left behind (an alert never sent again, a
 * withdrawal sent again).
 */
import { assert, layer } from "@effect/vitest"
import { Duration, Effect, Fiber, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { quietAlert, withdrawMessage } from "../../src/push/Alerts.ts"
import { Outbox } from "../../src/push/Outbox.ts"
import { PushGateway } from "../../src/push/PushGateway.ts"
import { Retry } from "../../src/push/PushMessage.ts"
import type { Provider } from "../../src/push/PushMessage.ts"
import type { NewPush } from "../../src/push/Outbox.ts"
import { SandboxRepo } from "../../src/push/SandboxRepo.ts"
import { OutboxWorkers } from "../../src/runtime/Workers.ts"
import { alertPush as push, outboxLayer } from "./outboxSupport.ts"
import { deviceActive, insertDevice, uniqueId } from "./support.ts"
import { eventually } from "../../../../test/support/eventually.ts"

// The outbox with its workers (drain, heartbeat), as `herald serve` runs it.
const TestLayer = OutboxWorkers.pipe(Layer.provideMerge(outboxLayer({ staleClaim: Duration.seconds(1) })))

const device = (token: string, platform: "ios" | "android" = "ios") =>
  Effect.gen(function*() {
    const id = uniqueId("dev")
    yield* insertDevice({ id, platform, token: `${token}${uniqueId("")}` })
    return id
  })

interface ReceiptRow {
  readonly status: string
  readonly attempts: number
  readonly errorCode: string | null
  readonly providerId: string | null
}

const receipt = (id: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<ReceiptRow>`SELECT status, attempts, error_code, provider_id FROM push_receipts WHERE id = ${id}`).pipe(
    Effect.map((rows) => rows[0]!)
  )

const deliveries = (deviceId: string) => Effect.flatMap(SandboxRepo, (repo) => repo.listForDevice(deviceId))


/**
 * A push as `node` left it when it claimed it 5 s ago and has not answered: committed at once in that state
 * (the worker never sees it pending). Answers the receipt's id.
 */
const claimedBy = (node: string, queued: NewPush) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const outbox = yield* Outbox
    return yield* Effect.gen(function*() {
      const [id] = yield* outbox.enqueue([queued])
      yield* sql`UPDATE push_receipts SET status = 'sending', attempts = 1, claimed_by = ${node},
                 claimed_at = now() - interval '5 seconds' WHERE id = ${id!}`
      yield* sql`UPDATE push_queue SET claimed_by = ${node}, claimed_at = now() - interval '5 seconds' WHERE receipt_id = ${id!}`
      return id!
    }).pipe(sql.withTransaction)
  })

layer(TestLayer, { timeout: "60 seconds", excludeTestServices: true })("push outbox", (it) => {
  it.effect("toDevices: one push per device of each delivery; what a provider gets is the stored message, decoded whole", () =>
    Effect.gen(function*() {
      const outbox = yield* Outbox
      const ios = yield* device("phone-")
      const android = yield* device("pixel-", "android")
      const itemId = uniqueId("anot")
      // A quiet alert carries the field a partial decoding would drop: Android's low notification priority.
      const message = quietAlert(push(android, itemId).message)
      const ids = yield* outbox.toDevices(
        { devices: [{ userId: "usr_test", id: ios }, { userId: "usr_test", deviceId: android }], origin: "notification", itemId, purpose: "alert", message },
        { sendNow: true }
      )
      assert.strictEqual(ids.length, 2)
      assert.deepStrictEqual(yield* outbox.sendCommitted(ids), { accepted: 2, failed: 0, queued: 0 })
      const [toPhone] = yield* deliveries(ios)
      assert.deepStrictEqual(toPhone!.payload, message.apns)
      const [toPixel] = yield* deliveries(android)
      const { notification, priority } = (toPixel!.payload as { android: { priority: string; notification?: unknown } }).android
      assert.deepStrictEqual([priority, notification], ["normal", { priority: "low" }])
    }))

  it.effect("a request sends its own pushes and records the provider's answer once", () =>
    Effect.gen(function*() {
      const outbox = yield* Outbox
      const ios = yield* device("phone-")
      const android = yield* device("pixel-", "android")
      const ids = yield* outbox.enqueue([push(ios), push(android)], { sendNow: true })
      const summary = yield* outbox.sendNow(ids)
      assert.deepStrictEqual(summary, { accepted: 2, failed: 0, queued: 0 })
      for (const id of ids) {
        const row = yield* receipt(id)
        assert.strictEqual(row.status, "accepted")
        assert.strictEqual(row.attempts, 1)
        assert.match(row.providerId ?? "", /^sbx_/)
      }
      assert.strictEqual((yield* deliveries(ios)).length, 1)
      assert.strictEqual((yield* deliveries(android)).length, 1)
      // Sending the same receipts again claims nothing: they are no longer pending.
      assert.deepStrictEqual(yield* outbox.sendNow(ids), { accepted: 0, failed: 0, queued: 2 })
      assert.strictEqual((yield* deliveries(ios)).length, 1)
    }))

  it.effect("the worker leaves a request's own pushes to the request", () =>
    Effect.gen(function*() {
      const outbox = yield* Outbox
      const phone = yield* device("phone-")
      const ids = yield* outbox.enqueue([push(phone)], { sendNow: true })
      yield* outbox.wake
      // Several worker polls (every 50 ms here) pass: the receipt is still the request's to send.
      yield* Effect.sleep(Duration.millis(300))
      assert.strictEqual((yield* receipt(ids[0]!)).status, "pending")
      assert.deepStrictEqual(yield* outbox.sendNow(ids), { accepted: 1, failed: 0, queued: 0 })
    }))

  it.effect("the worker delivers what no request sent", () =>
    Effect.gen(function*() {
      const outbox = yield* Outbox
      const phone = yield* device("phone-")
      const [id] = yield* outbox.enqueue([push(phone)])
      yield* outbox.wake
      const row = yield* eventually(receipt(id!), (r) => r.status === "accepted")
      assert.strictEqual(row.attempts, 1)
      assert.strictEqual((yield* deliveries(phone)).length, 1)
    }))

  it.effect("a dead token ends in error and deactivates the device", () =>
    Effect.gen(function*() {
      const outbox = yield* Outbox
      const phone = yield* device("unregistered-")
      const ids = yield* outbox.enqueue([push(phone)], { sendNow: true })
      assert.deepStrictEqual(yield* outbox.sendNow(ids), { accepted: 0, failed: 1, queued: 0 })
      const row = yield* receipt(ids[0]!)
      assert.strictEqual(row.status, "error")
      assert.strictEqual(row.errorCode, "Unregistered")
      assert.isFalse(yield* deviceActive(phone))

      // Later pushes to the inactive device fail without reaching the provider.
      const later = yield* outbox.enqueue([push(phone)], { sendNow: true })
      assert.deepStrictEqual(yield* outbox.sendNow(later), { accepted: 0, failed: 1, queued: 0 })
      assert.strictEqual((yield* receipt(later[0]!)).errorCode, "DeviceInactive")
    }))

  it.effect("transient failures are retried with backoff until the attempts run out", () =>
    Effect.gen(function*() {
      const outbox = yield* Outbox
      const phone = yield* device("unavailable-")
      const ids = yield* outbox.enqueue([push(phone)], { sendNow: true })
      assert.deepStrictEqual(yield* outbox.sendNow(ids), { accepted: 0, failed: 0, queued: 1 })
      const first = yield* receipt(ids[0]!)
      assert.include(["pending", "sending"], first.status)
      assert.strictEqual(first.errorCode ?? "ServiceUnavailable", "ServiceUnavailable")
      const last = yield* eventually(receipt(ids[0]!), (r) => r.status === "error")
      assert.strictEqual(last.attempts, 3)
      assert.strictEqual(last.errorCode, "ServiceUnavailable")
      assert.strictEqual((yield* deliveries(phone)).length, 0)
    }))

  it.effect("a claim left by a crashed process becomes unknown and is never sent again", () =>
    Effect.gen(function*() {
      const phone = yield* device("phone-")
      // What a process that died between claim and answer leaves behind.
      const id = yield* claimedBy("rcp_gone", push(phone))
      yield* eventually(receipt(id), (r) => r.status === "unknown")
      assert.strictEqual((yield* deliveries(phone)).length, 0)
    }))

  it.effect("a withdrawal a crashed process was sending is sent again, once", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const phone = yield* device("phone-")
      const itemId = uniqueId("int")
      const id = yield* claimedBy("rcp_gone", { ...push(phone, itemId), purpose: "withdraw", message: withdrawMessage(itemId) })
      const row = yield* eventually(receipt(id), (r) => r.status === "accepted")
      assert.strictEqual(row.attempts, 2)
      const sent = yield* deliveries(phone)
      assert.deepStrictEqual(sent.map((d) => (d.payload as { herald?: { withdraw?: string } }).herald?.withdraw), [itemId])
      const [queued] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM push_queue WHERE receipt_id = ${id}`
      assert.strictEqual(queued!.n, 0)
    }))

  it.effect("a live node's claim is never given up, however long its provider takes", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const phone = yield* device("phone-")
      const [live] = yield* sql<{ node: string }>`SELECT node FROM outbox_nodes ORDER BY seen_at DESC LIMIT 1`
      const id = yield* claimedBy(live!.node, push(phone))
      // Several sweeps pass (every 250 ms here, claims stale after 1 s of silence).
      yield* Effect.sleep(Duration.millis(1_500))
      assert.strictEqual((yield* receipt(id)).status, "sending")
    }))

  it.effect("pushes enqueued in a transaction that rolls back do not exist", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const outbox = yield* Outbox
      const phone = yield* device("phone-")
      const itemId = uniqueId("anot")
      yield* outbox.enqueue([push(phone, itemId)]).pipe(
        Effect.andThen(Effect.fail("abort" as const)),
        sql.withTransaction,
        Effect.flip
      )
      const rows = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM push_receipts WHERE item_id = ${itemId}`
      assert.strictEqual(rows[0]!.n, 0)
    }))
})

// A provider that holds each push until the test lets it go, then answers "try again later".
let heldCalls = 0
let releaseHeld: () => void = () => {}
const held: Provider = {
  name: "sandbox",
  description: "held",
  send: () =>
    Effect.suspend(() => {
      heldCalls++
      return Effect.promise(() => new Promise<void>((resolve) => (releaseHeld = resolve))).pipe(Effect.as(Retry("ServiceUnavailable")))
    })
}

const HeldLayer = OutboxWorkers.pipe(
  Layer.provideMerge(outboxLayer({ staleClaim: Duration.seconds(1) }, PushGateway.layerFromRoutes({ ios: held, android: held })))
)

layer(HeldLayer, { timeout: "60 seconds", excludeTestServices: true })("push outbox, a device removed mid-send", (it) => {
  it.effect("a push to retry whose device was removed while it was at the provider ends as DeviceRemoved", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const outbox = yield* Outbox
      const phone = yield* device("held-")
      const [id] = yield* outbox.enqueue([push(phone)], { sendNow: true })
      const sending = yield* Effect.forkChild(outbox.sendNow([id!]))
      yield* eventually(Effect.sync(() => heldCalls), (n) => n === 1)
      yield* sql`DELETE FROM devices WHERE id = ${phone}`
      releaseHeld()
      yield* Fiber.join(sending)
      const row = yield* eventually(receipt(id!), (r) => r.status !== "sending")
      assert.deepStrictEqual([row.status, row.errorCode], ["error", "DeviceRemoved"])
    }))
})
