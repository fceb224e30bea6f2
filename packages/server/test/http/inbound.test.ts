/**
 * Inbound webhook deliveries: JSON and text/plain bodies, the 1 MiB bound,
 * unknown and malformed tokens, and what a delivery becomes — an Event whose
 * status follows its pushes, an inbox item, and a push to each device.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { makeAgent, rawFetch, registerDevice, TestServer, TestServerLayer } from "../../../../test/support/server.ts"
import { eventually } from "../../../../test/support/eventually.ts"

type Agent = Effect.Success<ReturnType<typeof makeAgent>>

const hookPath = (webhookUrl: string) => new URL(webhookUrl).pathname

const post = (path: string, body: string, contentType = "application/json") =>
  rawFetch(path, { method: "POST", headers: { "content-type": contentType }, body })



const service = (agent: Agent, title = "Monitoring") =>
  Effect.map(agent.client.services.create({ payload: { title, url: "https://status.example.test" } }), (c) => ({
    ...c,
    path: hookPath(c.webhookUrl)
  }))

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("inbound webhook deliveries", (it) => {
  it.effect("a JSON delivery becomes an event, an inbox item and a push to every device", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["services:read", "services:write", "events:read", "inbox:read"])
      const phone = yield* registerDevice(agent, "iphone-")
      const tablet = yield* registerDevice(agent, "ipad-")
      const { path, service: svc } = yield* service(agent)

      const accepted = yield* post(path, JSON.stringify({ title: "Disk 91% full", body: "db-1 /var is at 91%", url: "https://grafana.example.test/d/1" }))
      assert.strictEqual(accepted.status, 202)
      const { eventId, ok } = accepted.body as { ok: boolean; eventId: string }
      assert.isTrue(ok)
      assert.match(eventId, /^evt_/)

      for (const device of [phone, tablet]) {
        const [push] = yield* eventually(
          Effect.map(agent.app.devices.deliveries({ params: { id: device.id } }), (r) => r.items),
          (items) => items.length === 1
        )
        assert.deepStrictEqual((push?.payload as { aps: { alert: unknown } }).aps.alert, { title: "Disk 91% full", body: "db-1 /var is at 91%" })
      }

      const events = yield* eventually(agent.client.history.events(), (e) => e.items[0]?.status === "delivered")
      const event = events.items[0]!
      assert.strictEqual(event.id, eventId)
      assert.strictEqual(event.serviceId, svc.id)
      assert.strictEqual(event.serviceTitle, "Monitoring")
      assert.strictEqual(event.title, "Disk 91% full")
      assert.strictEqual(event.body, "db-1 /var is at 91%")
      assert.strictEqual(event.url, "https://grafana.example.test/d/1")
      assert.strictEqual(event.deliveredCount, 2)
      assert.isNull(event.error)

      const inbox = yield* agent.client.inbox.get({ params: { id: `event:${eventId}` } })
      assert.strictEqual(inbox.origin, "event")
      assert.strictEqual(inbox.sourceName, "Monitoring")
      assert.strictEqual(inbox.title, "Disk 91% full")
      assert.strictEqual(inbox.body, "db-1 /var is at 91%")
      assert.isNull(inbox.readAt)
      assert.strictEqual(inbox.createdAt, event.createdAt)
    }))

  it.effect("removing a device keeps the delivery history: the event's count and the inbox receipts stay", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["services:read", "services:write", "events:read", "inbox:read", "devices:write"])
      const phone = yield* registerDevice(agent, "iphone-")
      const tablet = yield* registerDevice(agent, "ipad-")
      // A phone whose provider keeps answering "try later": its push stays queued.
      const flaky = yield* registerDevice(agent, "unavailable-")
      const { path } = yield* service(agent)
      const { eventId } = (yield* post(path, JSON.stringify({ title: "Deploy done", body: "v3" }))).body as { eventId: string }
      const delivered = (items: ReadonlyArray<{ status: string }>) => items.filter((r) => r.status === "accepted").length
      const before = yield* eventually(agent.client.inbox.get({ params: { id: `event:${eventId}` } }), (i) => delivered(i.pushReceipts ?? []) === 2)
      assert.strictEqual(before.pushReceipts?.length, 3)

      yield* agent.client.devices.remove({ params: { id: tablet.id } })
      yield* agent.client.devices.remove({ params: { id: flaky.id } })
      const after = yield* agent.client.inbox.get({ params: { id: `event:${eventId}` } })
      const byDevice = new Map((after.pushReceipts ?? []).map((r) => [r.deviceId, [r.status, r.errorCode]]))
      assert.deepStrictEqual(byDevice.get(phone.id), ["accepted", null])
      assert.deepStrictEqual(byDevice.get(tablet.id), ["accepted", null])
      // What the removed phone still had queued will never go.
      assert.deepStrictEqual(byDevice.get(flaky.id), ["error", "DeviceRemoved"])
      const event = (yield* agent.client.history.events()).items.find((e) => e.id === eventId)!
      assert.strictEqual(event.deliveredCount, 2)
    }))

  it.effect("a text/plain delivery: the text is the body and the service's title the title", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["services:write", "events:read"])
      const { path } = yield* service(agent, "Backups")
      const accepted = yield* post(path, "nightly backup finished in 4m12s", "text/plain")
      assert.strictEqual(accepted.status, 202)
      const [event] = (yield* agent.client.history.events()).items
      assert.isNull(event?.title)
      assert.strictEqual(event?.body, "nightly backup finished in 4m12s")
      assert.strictEqual(event?.status, "no_devices")
      assert.strictEqual(event?.deliveredCount, 0)
    }))

  it.effect("events: status follows the pushes; limit bounds the list; another account sees none", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["services:write", "events:read"])
      yield* registerDevice(agent, "ok-")
      yield* registerDevice(agent, "unregistered-")
      const { path } = yield* service(agent)
      yield* post(path, JSON.stringify({ body: "one" }))
      const [first] = (yield* eventually(
        agent.client.history.events(),
        (e) => e.items[0]?.status === "partial"
      )).items
      assert.strictEqual(first?.deliveredCount, 1)
      assert.strictEqual(first?.error, "Unregistered")
      // The dead device is inactive now: the next delivery reaches the one left.
      yield* post(path, JSON.stringify({ body: "two" }))
      const events = yield* eventually(
        agent.client.history.events({ query: { limit: 1 } }),
        (e) => e.items[0]?.body === "two" && e.items[0]?.status === "delivered"
      )
      assert.lengthOf(events.items, 1)
      assert.strictEqual(events.items[0]?.deliveredCount, 1)
      assert.isNull(events.items[0]?.error)
      assert.lengthOf((yield* agent.client.history.events()).items, 2)

      const other = yield* makeAgent(["events:read"])
      assert.deepStrictEqual((yield* other.client.history.events()).items, [])
      const { baseUrl } = yield* TestServer
      for (const limit of ["0", "101", "x"]) {
        const response = yield* Effect.promise(() =>
          fetch(`${baseUrl}/api/agent/events?limit=${limit}`, { headers: { authorization: `Bearer ${agent.secret}` } })
        )
        assert.strictEqual(response.status, 400, limit)
      }
    }))

  it.effect("unknown, rotated and malformed tokens answer the same 404", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["services:write"])
      const { path, service: svc } = yield* service(agent)
      yield* agent.client.services.rotate({ params: { id: svc.id } })
      for (const target of [path, "/hooks/hlw_000000000000000000000000000000000000000000000000000", "/hooks/not-a-token", `/hooks/hlw_${"a".repeat(300)}`, "/hooks/hlw_%E2%9C%93"]) {
        const response = yield* post(target, JSON.stringify({ body: "x" }))
        assert.strictEqual(response.status, 404, target)
        assert.deepStrictEqual(response.body, { error: "Unknown webhook.", code: "NOT_FOUND" })
      }
    }))

  // Issue 34 reversed two refusals: a field beyond the spec's four is kept on the Event (payload), and XML is
  // text; binary bodies are still 415 (inboundSenders.test.ts covers the senders).
  it.effect("bad bodies: 400 for invalid JSON or an empty body; unknown fields kept; 415 for binary types", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["services:write", "events:read"])
      const { path } = yield* service(agent)
      for (const body of ["{", JSON.stringify({}), JSON.stringify({ body: "" }), JSON.stringify({ body: "x", url: "nope" })]) {
        const response = yield* post(path, body)
        assert.strictEqual(response.status, 400, body)
      }
      const extra = yield* post(path, JSON.stringify({ body: "x", extra: 1 }))
      assert.strictEqual(extra.status, 202)
      const [event] = (yield* agent.client.history.events()).items
      assert.deepStrictEqual([event?.body, event?.payload], ["x", { body: "x", extra: 1 }])
      assert.strictEqual((yield* post(path, "", "text/plain")).status, 400)
      assert.strictEqual((yield* post(path, "<x/>", "application/xml")).status, 202)
      assert.strictEqual((yield* post(path, "PK\u0003\u0004", "application/zip")).status, 415)
    }))

  it.effect("bodies over 1 MiB answer 413, declared or chunked", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["services:write"])
      const { path } = yield* service(agent)
      const big = "x".repeat(1024 * 1024 + 1)
      const declared = yield* post(path, big, "text/plain")
      assert.strictEqual(declared.status, 413)
      assert.strictEqual((declared.body as { code: string }).code, "PAYLOAD_TOO_LARGE")
      assert.match((declared.body as { error: string }).error, /limit of 1048576 bytes/)

      const { baseUrl } = yield* TestServer
      const chunked = yield* Effect.promise(async () => {
        const stream = new ReadableStream<Uint8Array>({
          start(controller) {
            for (let i = 0; i < 65; i++) controller.enqueue(new TextEncoder().encode("y".repeat(16 * 1024)))
            controller.close()
          }
        })
        const response = await fetch(`${baseUrl}${path}`, {
          method: "POST",
          headers: { "content-type": "text/plain" },
          body: stream,
          duplex: "half"
        } as RequestInit)
        return response.status
      })
      assert.strictEqual(chunked, 413)
      // Under the bound but over the body field's own limit: a validation failure, not a size one.
      assert.strictEqual((yield* post(path, "z".repeat(20_000), "text/plain")).status, 400)
    }))
})
