/**
 * The push outbox survives a crash: a real `herald serve` accepts a
 * notification and commits its pushes, is killed (SIGKILL) before sending
 * them, and the next process delivers each push exactly once.
 *
 * The first process runs with `HERALD_PUSH_PAUSED=true` (accept and queue,
 * send nothing): that pins the kill between "accepted" and "sent" without
 * racing the sender.
 */
import { assert, describe, it } from "@effect/vitest"
import { HeraldClient, HeraldPersonClient } from "@herald/client"
import { Duration, Effect } from "effect"
import { childDatabase, embeddedDataCopy, usingPostgres } from "../support/database.ts"
import { startServer } from "../support/process.ts"
import { sentNotification } from "../support/notifications.ts"
import { personOn } from "../support/serverClients.ts"

const clients = (baseUrl: string, session: string, token: string) =>
  Effect.all({
    app: Effect.provide(Effect.service(HeraldPersonClient), HeraldPersonClient.layer({ baseUrl, token: session, retries: 0 })),
    agent: Effect.provide(Effect.service(HeraldClient), HeraldClient.layer({ baseUrl, token, retries: 0 }))
  })

const crashBetweenAcceptAndSend = (env: Record<string, string>) =>
  Effect.gen(function*() {
    const paused = yield* startServer({ ...env, HERALD_PUSH_PAUSED: "true" })
    const { session } = yield* personOn(env, { email: "ada@example.test", name: "Ada" })
    const { app } = yield* clients(paused.baseUrl, session, "unused")
    const token = yield* app.tokens.create({ payload: { name: "crash test", scopes: ["notifications:send"] } })
    const phone = yield* app.devices.register({ payload: { platform: "ios", deviceName: "phone", pushToken: "crash-phone" } })
    const pixel = yield* app.devices.register({ payload: { platform: "android", deviceName: "pixel", pushToken: "crash-pixel" } })

    const { agent } = yield* clients(paused.baseUrl, session, token.secret)
    const queued = yield* sentNotification(agent.notifications.create({ payload: { title: "Deploy done", body: "v2.3.1 is live" } }))
    assert.strictEqual(queued.accepted, 0)
    assert.strictEqual(queued.message, "Accepted by 0 of 2 devices. 2 queued for retry.")
    yield* paused.kill

    const restarted = yield* startServer(env)
    const after = yield* clients(restarted.baseUrl, session, token.secret)
    const deliveries = (deviceId: string) =>
      Effect.map(after.app.devices.deliveries({ params: { id: deviceId } }), (r) => r.items)
    for (const device of [phone, pixel]) {
      let items = yield* deliveries(device.id)
      for (let i = 0; i < 200 && items.length === 0; i++) {
        yield* Effect.sleep(Duration.millis(50))
        items = yield* deliveries(device.id)
      }
      assert.lengthOf(items, 1, `the queued push reached ${device.id}`)
    }

    // A push sent after the first proves the worker has moved on; each device
    // then holds the recovered push once and the new one once.
    const next = yield* sentNotification(after.agent.notifications.create({ payload: { title: "Next", body: "second" } }))
    assert.strictEqual(next.accepted, 2)
    for (const device of [phone, pixel]) {
      const items = yield* deliveries(device.id)
      assert.lengthOf(items, 2)
      const titles = items.map((d) =>
        device.platform === "ios"
          ? (d.payload as { aps: { alert: { title: string } } }).aps.alert.title
          : (d.payload as { notification: { title: string } }).notification.title
      )
      assert.deepStrictEqual(titles, ["Deploy done", "Next"])
    }
  })

describe("push outbox, end to end", () => {
  // Where no PostgreSQL is configured the second database would be another embedded copy: the same run twice.
  it.live("a push accepted before a crash is delivered once after restart: embedded, and PostgreSQL when configured", () =>
    Effect.scoped(Effect.gen(function*() {
      yield* crashBetweenAcceptAndSend({ HERALD_DATA_DIR: yield* embeddedDataCopy("outbox") })
      if (usingPostgres) yield* crashBetweenAcceptAndSend((yield* childDatabase).env)
    })), { timeout: 180_000 })
})
