/**
 * What operators and integrators read: liveness, readiness, Prometheus
 * metrics per route and status, the generated OpenAPI documents and the docs
 * page; and the sandbox provider's record of what a device was sent.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { latestKnownMigration } from "../../src/db/Migrations.ts"
import { PushGateway } from "../../src/push/PushGateway.ts"
import { eventually } from "../../../../test/support/eventually.ts"
import { makeAgent, rawFetch, TestServerLayer } from "../../../../test/support/server.ts"

layer(TestServerLayer, { timeout: "120 seconds", excludeTestServices: true })("operations", (it) => {
  it.effect("herald_db_up reports the database before anyone probes readiness (first in this file)", () =>
    Effect.gen(function*() {
      const up = yield* eventually(
        Effect.map(rawFetch("/metrics"), (m) => (m.body as string).split("\n").find((l) => l.startsWith("herald_db_up"))),
        (line) => line !== undefined
      )
      assert.strictEqual(Number(up!.split(" ").pop()), 1)
    }))

  it.effect("healthz and readyz answer 200 once migrations are applied", () =>
    Effect.gen(function*() {
      const health = yield* rawFetch("/healthz")
      assert.strictEqual(health.status, 200)
      assert.deepStrictEqual(health.body, { ok: true })
      const ready = yield* rawFetch("/readyz")
      assert.strictEqual(ready.status, 200)
      // Every migration this build knows, whichever is the latest.
      assert.strictEqual((ready.body as { ok: boolean; migration: number }).migration, yield* latestKnownMigration)
    }))

  it.effect("metrics count requests per route pattern and status, and push sends per provider", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["devices:read"])
      yield* agent.client.auth.status()
      yield* agent.client.auth.status()
      yield* rawFetch("/api/agent/devices")
      const device = yield* agent.app.devices.register({ payload: { platform: "android", pushToken: `m-${agent.person.id}` } })
      const push = yield* PushGateway
      yield* push.send({ deviceId: device.id, platform: "android", token: `m-${agent.person.id}` }, {
        pushType: "alert",
        priority: 10,
        apns: { aps: { alert: { title: "t", body: "b" } } },
        fcm: { notification: { title: "t", body: "b" } }
      })
      const metrics = yield* rawFetch("/metrics")
      assert.strictEqual(metrics.status, 200)
      const text = metrics.body as string
      const line = (prefix: string) => text.split("\n").find((l) => l.startsWith(prefix))
      const status200 = line('herald_http_requests_total{method="GET",route="/api/agent/auth/status",status="200"}')
      assert.isDefined(status200, text.slice(0, 2000))
      assert.isAtLeast(Number(status200!.split(" ").pop()), 2)
      assert.isDefined(line('herald_http_requests_total{method="GET",route="/api/agent/devices",status="401"}'))
      assert.include(text, "herald_http_request_duration_seconds_bucket")
      assert.include(text, 'herald_push_sends_total{provider="sandbox",outcome="accepted"}')
      assert.notInclude(text, device.id)
    }))

  it.effect("garbage-collection pauses are counted as they happen, by kind", () =>
    Effect.gen(function*() {
      const minor = (text: string) => {
        const value = (name: string) => Number(text.split("\n").find((l) => l.startsWith(`${name}{kind="minor"}`))?.split(" ").pop() ?? 0)
        return { pauses: value("herald_gc_pauses_total"), seconds: value("herald_gc_pause_seconds_total") }
      }
      const before = minor((yield* rawFetch("/metrics")).body as string)
      // Short-lived garbage well past the young generation's size: the server's process (this one) scavenges.
      let kept = 0
      for (let i = 0; i < 200_000; i++) kept += Array.from({ length: 64 }, (_, j) => ({ i, j })).length
      assert.strictEqual(kept, 200_000 * 64)
      const after = yield* eventually(
        Effect.map(rawFetch("/metrics"), (m) => minor(m.body as string)),
        (m) => m.pauses > before.pauses
      )
      assert.isAbove(after.seconds, before.seconds)
    }))

  it.effect("both OpenAPI documents and the docs page are served", () =>
    Effect.gen(function*() {
      const agent = yield* rawFetch("/api/agent/openapi.json")
      assert.strictEqual(agent.status, 200)
      const doc = agent.body as { openapi: string; info: { title: string; version: string }; paths: Record<string, unknown> }
      assert.strictEqual(doc.openapi, "3.1.0")
      assert.strictEqual(doc.info.title, "Scoped Agent API")
      assert.strictEqual(doc.info.version, "1.0.0")
      assert.includeMembers(Object.keys(doc.paths), ["/api/agent/auth/status", "/api/agent/tokens/{id}", "/api/agent/devices"])
      const app = yield* rawFetch("/api/app/openapi.json")
      assert.includeMembers(Object.keys((app.body as { paths: Record<string, unknown> }).paths), ["/api/app/me", "/api/app/devices/{id}/deliveries"])
      const docs = yield* rawFetch("/api/agent/docs")
      assert.strictEqual(docs.status, 200)
      assert.include(docs.body as string, "Scoped Agent API")
    }))

  it.effect("the sandbox provider's deliveries are listed per device, oldest first", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([])
      const device = yield* agent.app.devices.register({ payload: { platform: "ios", pushToken: `s-${agent.person.id}` } })
      const push = yield* PushGateway
      for (const title of ["first", "second"]) {
        const outcome = yield* push.send({ deviceId: device.id, platform: "ios", token: `s-${agent.person.id}` }, {
          pushType: "alert",
          priority: 10,
          collapseId: title,
          apns: { aps: { alert: { title, body: "b" } } },
          fcm: {}
        })
        assert.strictEqual(outcome._tag, "Accepted")
      }
      const { items } = yield* agent.app.devices.deliveries({ params: { id: device.id } })
      assert.deepStrictEqual(items.map((d) => (d.payload.aps as { alert: { title: string } }).alert.title), ["first", "second"])
      assert.deepStrictEqual(items.map((d) => [d.pushType, d.priority]), [["alert", 10], ["alert", 10]])
      assert.match(items[0]!.id, /^sbx_/)
    }))

  it.effect("an unregistered- token marks the device inactive, visible through the Agent API", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["devices:read"])
      const token = `unregistered-${agent.person.id}`
      const device = yield* agent.app.devices.register({ payload: { platform: "ios", pushToken: token } })
      const push = yield* PushGateway
      const outcome = yield* push.send({ deviceId: device.id, platform: "ios", token }, {
        pushType: "alert",
        priority: 10,
        apns: { aps: { alert: { title: "t", body: "b" } } },
        fcm: {}
      })
      assert.strictEqual(outcome._tag, "Rejected")
      const listed = yield* agent.client.devices.list()
      assert.strictEqual(listed.items[0]!.active, false)
      // Registering again (the app reopened) reactivates it.
      const again = yield* agent.app.devices.register({ payload: { platform: "ios", pushToken: token } })
      assert.strictEqual(again.active, true)
    }))
})
