/**
 * A queued push whose stored message does not decode (a poison row) cannot
 * stop the outbox: the claim that takes it settles it as failed, logs why
 * under its receipt id, and sends the rest, by the worker and by a request.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Logger } from "effect"
import { SqlClient } from "effect/sql"
import { Outbox } from "../../src/push/Outbox.ts"
import { SandboxRepo } from "../../src/push/SandboxRepo.ts"
import { alertPush as push, outboxLayer } from "./outboxSupport.ts"
import { insertDevice, uniqueId } from "./support.ts"

// No workers: each test runs the drain itself, so nothing else claims its rows.
const TestLayer = outboxLayer()


const phone = Effect.gen(function*() {
  const id = uniqueId("dev")
  yield* insertDevice({ id, platform: "ios", token: uniqueId("phone") })
  return id
})

/** A receipt queued by hand, due now, whose message is not a push (no `pushType`, no `fcm`). */
const poisonRow = (deviceId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const id = uniqueId("rcp")
    yield* sql`INSERT INTO push_receipts (id, user_id, device_id, origin, item_id, purpose, next_attempt_at)
               VALUES (${id}, 'usr_test', ${deviceId}, 'notification', ${uniqueId("anot")}, 'alert', now())`
    yield* sql`INSERT INTO push_queue (receipt_id, device_id, due_at, message)
               VALUES (${id}, ${deviceId}, now(), ${JSON.stringify({ priority: 10, apns: "not an object" })}::jsonb)`
    return id
  })

const receipt = (id: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ readonly status: string; readonly errorCode: string | null }>`
      SELECT status, error_code FROM push_receipts WHERE id = ${id}`).pipe(Effect.map((rows) => rows[0]!))

const queued = (id: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM push_queue WHERE receipt_id = ${id}`).pipe(
    Effect.map((rows) => rows[0]!.n)
  )

const deliveries = (deviceId: string) => Effect.flatMap(SandboxRepo, (repo) => repo.listForDevice(deviceId))

/** Runs `effect` with its log lines (logfmt) captured. */
const capturingLogs = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function*() {
    const lines: Array<string> = []
    const value = yield* effect.pipe(
      Effect.provide(Logger.layer([Logger.map(Logger.formatLogFmt, (line) => void lines.push(line))]))
    )
    return { value, lines }
  })

layer(TestLayer, { timeout: "60 seconds", excludeTestServices: true })("push outbox: a row that does not decode", (it) => {
  it.effect("the worker's claim settles it as failed, logs it, and sends the good pushes of the same batch", () =>
    Effect.gen(function*() {
      const outbox = yield* Outbox
      const first = yield* phone
      const second = yield* phone
      const bad = yield* poisonRow(first)
      const good = yield* outbox.enqueue([push(first), push(second)])

      // A wake-up queued first, so the drain's wait after its batch ends at once.
      yield* outbox.wake
      const { lines } = yield* capturingLogs(outbox.drain)

      for (const id of good) assert.strictEqual((yield* receipt(id)).status, "accepted")
      assert.strictEqual((yield* deliveries(first)).length, 1)
      assert.strictEqual((yield* deliveries(second)).length, 1)
      assert.deepStrictEqual(yield* receipt(bad), { status: "error", errorCode: "UndecodableMessage" })
      // Settled for good: no later claim meets it again.
      assert.strictEqual(yield* queued(bad), 0)
      const logged = lines.filter((line) => line.includes(bad))
      assert.strictEqual(logged.length, 1)
      assert.include(logged[0]!, "level=ERROR")
      assert.include(logged[0]!, "decodeError=")
      assert.include(logged[0]!, "pushType")

      // The worker goes on: a push queued afterwards is sent by the next drain.
      const [later] = yield* outbox.enqueue([push(second)])
      yield* outbox.wake
      yield* outbox.drain
      assert.strictEqual((yield* receipt(later!)).status, "accepted")
    }))

  it.effect("a request's own claim counts it as failed and still sends the rest", () =>
    Effect.gen(function*() {
      const outbox = yield* Outbox
      const device = yield* phone
      const bad = yield* poisonRow(device)
      const good = yield* outbox.enqueue([push(device)], { sendNow: true })

      const { value: summary } = yield* capturingLogs(outbox.sendNow([...good, bad]))

      assert.deepStrictEqual(summary, { accepted: 1, failed: 1, queued: 0 })
      assert.strictEqual((yield* receipt(good[0]!)).status, "accepted")
      assert.deepStrictEqual(yield* receipt(bad), { status: "error", errorCode: "UndecodableMessage" })
      assert.strictEqual((yield* deliveries(device)).length, 1)
    }))
})
