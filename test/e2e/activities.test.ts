/**
 * A live activity's queue survives a crash of a real `herald serve`: with
 * operations queued (an iOS device still without its update token; an
 * Android update held back by pacing), the server is killed (SIGKILL) and
 * restarted; the queued operations then reach the sandbox in order, and
 * nothing the provider had accepted is sent again.
 */
import { assert, describe, it } from "@effect/vitest"
import { HeraldClient, HeraldPersonClient } from "@herald/client"
import { Duration, Effect } from "effect"
import { childDatabase } from "../support/database.ts"
import { startServer } from "../support/process.ts"
import { personOn } from "../support/serverClients.ts"

const clients = (baseUrl: string, session: string, token: string) =>
  Effect.all({
    app: Effect.provide(Effect.service(HeraldPersonClient), HeraldPersonClient.layer({ baseUrl, token: session, retries: 0 })),
    agent: Effect.provide(Effect.service(HeraldClient), HeraldClient.layer({ baseUrl, token, retries: 0 }))
  })

describe("live activity queue across a restart", () => {
  it.live("sends what was queued before the crash, in order, once", () =>
    Effect.scoped(Effect.gen(function*() {
      const { env: database } = yield* childDatabase
      // Routine updates at most every 3 s per device, so one is still queued at the crash.
      const env = { ...database, HERALD_ACTIVITY_UPDATE_INTERVAL_MS: "3000" }
      const first = yield* startServer(env)
      const { session } = yield* personOn(env, { email: "ida@example.test", name: "Ida" })
      const { app } = yield* clients(first.baseUrl, session, "unused")
      const token = yield* app.tokens.create({ payload: { name: "la", scopes: ["activities:write", "activities:read"] } })
      const iphone = yield* app.devices.register({ payload: { platform: "ios", pushToken: "la-ios", liveActivitiesCapable: true } })
      yield* app.devices.pushToStartToken({ params: { id: iphone.id }, payload: { token: "la-pts" } })
      const pixel = yield* app.devices.register({ payload: { platform: "android", pushToken: "la-android", liveActivitiesCapable: true } })
      const { agent } = yield* clients(first.baseUrl, session, token.secret)

      const started = yield* agent.activities.start({ payload: { key: "deploy", props: { title: "Deploy", progress: 0 } } })
      assert.strictEqual(started.accepted, 2)
      const update = (props: Record<string, unknown>, priority: "high" | "default" = "default") =>
        agent.activities.update({ params: { identifier: "deploy" }, payload: { props, priority } })
      yield* update({ progress: 0.3 }) // Android: sent; iOS: waits for the token
      yield* update({ progress: 0.5, status: "migrating" }, "high") // a milestone: Android at once; iOS waits
      const held = yield* update({ progress: 0.7 }) // Android: paced; iOS: waits
      assert.strictEqual(held.queued, 2)
      yield* first.kill

      const second = yield* startServer(env)
      const after = yield* clients(second.baseUrl, session, token.secret)
      const events = (deviceId: string) =>
        Effect.map(after.app.devices.deliveries({ params: { id: deviceId } }), (r) =>
          r.items.map((d) => {
            const p = d.payload as { aps?: { event: string; "content-state": { progress: number } }; data?: { event: string; state: string } }
            return p.aps !== undefined
              ? `${p.aps.event} ${p.aps["content-state"].progress}`
              : `${p.data!.event} ${JSON.parse(p.data!.state).progress}`
          }))
      const waitFor = (deviceId: string, n: number) =>
        Effect.gen(function*() {
          for (let i = 0; i < 300; i++) {
            const items = yield* events(deviceId)
            if (items.length >= n) return items
            yield* Effect.sleep(Duration.millis(50))
          }
          return yield* events(deviceId)
        })
      assert.deepStrictEqual(yield* waitFor(pixel.id, 4), ["start 0", "update 0.3", "update 0.5", "update 0.7"])

      yield* after.app.activities.updateToken({ params: { id: started.activity.id }, payload: { deviceId: iphone.id, token: "la-update" } })
      // The routine 0.3 was superseded by the milestone before it could go; the milestone and the later snapshot go in order.
      assert.deepStrictEqual(yield* waitFor(iphone.id, 3), ["start 0", "update 0.5", "update 0.7"])

      const ended = yield* after.agent.activities.end({ params: { identifier: "deploy" } })
      assert.strictEqual(ended.activity.status, "ended")
      assert.deepStrictEqual(yield* waitFor(iphone.id, 4), ["start 0", "update 0.5", "update 0.7", "end 0.7"])
      assert.deepStrictEqual(yield* waitFor(pixel.id, 5), ["start 0", "update 0.3", "update 0.5", "update 0.7", "end 0.7"])
    })), { timeout: 120_000 })
})
