/**
 * POST /notifications over HTTP with the typed client: fan-out to the
 * account's devices through the sandbox provider, `accepted` counting the
 * providers that accepted during the request, device targeting, validation,
 * and what a send files in the inbox and the activity feed.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { makeAgent, rawFetch, registerDevice, TestServerLayer } from "../../../../test/support/server.ts"
import { eventually } from "../../../../test/support/eventually.ts"
import { deliveries, setPushToken } from "./notificationsSupport.ts"
import { sentNotification } from "../../../../test/support/notifications.ts"

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("notifications", (it) => {
  it.effect("an alert that would pass the providers' 4 KB limit sheds its image, then its link; the inbox keeps both", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["notifications:send", "inbox:read"])
      const phone = yield* registerDevice(agent, "iphone-")
      const pixel = yield* registerDevice(agent, "pixel-", "android")
      const long = (what: string) => `https://cdn.example.test/${what}/${"a".repeat(2000)}`
      const created = yield* sentNotification(agent.client.notifications.create({
        payload: { title: "Build finished", body: "All 212 tests passed.", url: long("run"), imageUrl: long("img") }
      }))
      assert.strictEqual(created.accepted, 2)
      const [ios] = yield* deliveries(agent, phone.id)
      const [android] = yield* deliveries(agent, pixel.id)
      for (const payload of [ios?.payload, android?.payload]) {
        assert.isAtMost(Buffer.byteLength(JSON.stringify(payload)), 4096)
        assert.include(JSON.stringify(payload), `notification:${created.notification.id}`)
        assert.notInclude(JSON.stringify(payload), long("img"))
        assert.include(JSON.stringify(payload), "All 212 tests passed.")
      }
      assert.include(JSON.stringify(ios?.payload), long("run"))
      const detail = yield* agent.client.inbox.get({ params: { id: `notification:${created.notification.id}` } })
      assert.deepStrictEqual([detail.url, detail.body], [long("run"), "All 212 tests passed."])
    }))

  it.effect("pushes to every active device and counts what the providers accepted", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["notifications:send"])
      const phone = yield* registerDevice(agent, "iphone-")
      const pixel = yield* registerDevice(agent, "pixel-", "android")
      const created = yield* sentNotification(agent.client.notifications.create({
        payload: { title: "Build finished", body: "All 212 tests passed.", url: "https://ci.example.test/run/1" }
      }))
      assert.strictEqual(created.accepted, 2)
      assert.isUndefined(created.idempotent)
      assert.match(created.notification.id, /^anot_/)
      assert.strictEqual(created.notification.title, "Build finished")
      assert.strictEqual(created.notification.body, "All 212 tests passed.")
      assert.strictEqual(created.notification.url, "https://ci.example.test/run/1")
      assert.isNull(created.notification.imageUrl)
      assert.strictEqual(created.message, "Accepted by 2 of 2 devices.")

      const [ios] = yield* deliveries(agent, phone.id)
      assert.strictEqual(ios?.pushType, "alert")
      assert.strictEqual(ios?.priority, 10)
      assert.deepStrictEqual((ios?.payload as { aps: { alert: unknown } }).aps.alert, {
        title: "Build finished",
        body: "All 212 tests passed."
      })
      const [android] = yield* deliveries(agent, pixel.id)
      assert.deepStrictEqual((android?.payload as { notification: unknown }).notification, {
        title: "Build finished",
        body: "All 212 tests passed."
      })
    }))

  it.effect("answers 201 with the created record", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["notifications:send"])
      const response = yield* rawFetch("/api/agent/notifications", {
        method: "POST",
        headers: { authorization: `Bearer ${agent.secret}`, "content-type": "application/json" },
        body: JSON.stringify({ title: "t", body: "b", bodyFormat: "markdown", projectId: "deploys", summary: "s" })
      })
      assert.strictEqual(response.status, 201)
      const body = response.body as { notification: Record<string, unknown>; accepted: number; message: string }
      assert.strictEqual(body.accepted, 0)
      assert.strictEqual(body.message, "Saved to the inbox; the account has no active devices.")
      assert.strictEqual(body.notification.bodyFormat, "markdown")
      assert.strictEqual(body.notification.projectId, "deploys")
      assert.strictEqual(body.notification.summary, "s")
    }))

  it.effect("deviceIds narrows the push; another account's device answers 404", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["notifications:send"])
      const first = yield* registerDevice(agent, "a-")
      const second = yield* registerDevice(agent, "b-")
      const created = yield* sentNotification(agent.client.notifications.create({ payload: { title: "t", body: "b", deviceIds: [second.id] } }))
      assert.strictEqual(created.accepted, 1)
      assert.lengthOf(yield* deliveries(agent, first.id), 0)
      assert.lengthOf(yield* deliveries(agent, second.id), 1)

      const other = yield* makeAgent(["notifications:send"])
      const theirs = yield* registerDevice(other, "c-")
      const error = yield* Effect.flip(agent.client.notifications.create({ payload: { title: "t", body: "b", deviceIds: [second.id, theirs.id] } }))
      assert.strictEqual(error._tag, "NotFound")
      assert.lengthOf(yield* deliveries(agent, second.id), 1)
    }))

  it.effect("a dead token is not accepted and a failing provider leaves the push queued", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["notifications:send", "devices:read"])
      yield* registerDevice(agent, "ok-")
      const dead = yield* registerDevice(agent, "unregistered-")
      yield* registerDevice(agent, "unavailable-")
      const created = yield* sentNotification(agent.client.notifications.create({ payload: { title: "t", body: "b" } }))
      assert.strictEqual(created.accepted, 1)
      assert.strictEqual(created.message, "Accepted by 1 of 3 devices. 1 queued for retry.")
      const devices = (yield* agent.client.devices.list()).items
      assert.isFalse(devices.find((d) => d.id === dead.id)!.active)
      // Inactive devices are left out of later pushes.
      const again = yield* sentNotification(agent.client.notifications.create({ payload: { title: "t", body: "b" } }))
      assert.strictEqual(again.message, "Accepted by 1 of 2 devices. 1 queued for retry.")
    }))

  it.effect("needs notifications:send", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["inbox:read"])
      const error = yield* Effect.flip(agent.client.notifications.create({ payload: { title: "t", body: "b" } }))
      assert.strictEqual(error._tag, "MissingScope")
      assert.deepStrictEqual(error._tag === "MissingScope" ? error.required : [], ["notifications:send"])
    }))

  it.effect("refuses bad bodies with VALIDATION_FAILED", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["notifications:send"])
      const post = (body: unknown) =>
        rawFetch("/api/agent/notifications", {
          method: "POST",
          headers: { authorization: `Bearer ${agent.secret}`, "content-type": "application/json" },
          body: JSON.stringify(body)
        })
      for (
        const body of [
          {},
          { title: "", body: "b" },
          { title: "t", body: "" },
          { title: "t", body: "b", extra: 1 },
          { title: "t", body: "b", url: "not a url" },
          { title: "t", body: "b", url: "javascript:alert(1)" },
          { title: "t", body: "b", url: "DATA:text/html,<script>1</script>" },
          { title: "t", body: "b", url: "file:///etc/passwd" },
          { title: "t", body: "b", imageUrl: "file:///private/var/mobile/photo.jpg" },
          { title: "t", body: "b", imageUrl: "ftp://images.example.test/a.png" },
          { title: "t", body: "b", bodyFormat: "html" },
          { title: "t", body: "b", projectId: "unfiled" },
          { title: "t", body: "b", deviceIds: [] },
          { title: "t", body: "b", deviceIds: ["tok_x"] },
          { title: "t".repeat(201), body: "b" }
        ]
      ) {
        const response = yield* post(body)
        assert.strictEqual(response.status, 400, JSON.stringify(body))
        assert.strictEqual((response.body as { code: string }).code, "VALIDATION_FAILED")
      }
      // Links a phone opens in an app, a mail or a call are taps like any other.
      for (const url of ["myapp://deploys/42", "mailto:ops@example.test", "tel:+15551234567", "https://ci.example.test/1"]) {
        assert.strictEqual((yield* post({ title: "t", body: "b", url, imageUrl: "http://images.example.test/a.png" })).status, 201, url)
      }
    }))

  it.effect("the worker finishes a push the request could not deliver", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["notifications:send"])
      const flaky = yield* registerDevice(agent, "unavailable-")
      const created = yield* sentNotification(agent.client.notifications.create({ payload: { title: "t", body: "b" } }))
      assert.strictEqual(created.accepted, 0)
      // The phone's token recovers; the retry delivers the queued push exactly once.
      yield* setPushToken(flaky.id, `recovered-${flaky.id}`)
      yield* eventually(deliveries(agent, flaky.id), (items) => items.length === 1)
    }))
})

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("notifications in the inbox", (it) => {
  it.effect("a push is filed with a plain-text preview of its markdown and one receipt per device", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["notifications:send", "inbox:read", "events:read"])
      const phone = yield* registerDevice(agent, "iphone-")
      const dead = yield* registerDevice(agent, "unregistered-")
      const { notification } = yield* sentNotification(agent.client.notifications.create({
        payload: { title: "Release", body: "**v2** is [live](https://example.test)", bodyFormat: "markdown", projectId: "deploys" }
      }))
      const [push] = yield* deliveries(agent, phone.id)
      assert.strictEqual((push?.payload as { aps: { alert: { body: string } } }).aps.alert.body, "v2 is live")

      const page = yield* agent.client.inbox.list()
      assert.strictEqual(page.items[0]?.id, `notification:${notification.id}`)
      assert.strictEqual(page.items[0]?.preview, "v2 is live")
      assert.strictEqual(page.items[0]?.bodyFormat, "markdown")
      assert.strictEqual(page.items[0]?.sourceName, "test agent")
      assert.strictEqual(page.items[0]?.projectId, "deploys")
      assert.strictEqual(page.items[0]?.createdAt, notification.createdAt)

      const detail = yield* agent.client.inbox.get({ params: { id: `notification:${notification.id}` } })
      assert.strictEqual(detail.body, "**v2** is [live](https://example.test)")
      const receipts = Object.fromEntries((detail.pushReceipts ?? []).map((r) => [r.deviceId, r]))
      assert.strictEqual(receipts[phone.id]?.status, "accepted")
      assert.strictEqual(receipts[dead.id]?.status, "error")
      assert.strictEqual(receipts[dead.id]?.errorCode, "Unregistered")
    }))
})

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("activity feed", (it) => {
  it.effect("lists the account's notifications newest first, 20 a page, with the total", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["notifications:send", "events:read"])
      const sent: Array<string> = []
      for (let i = 0; i < 22; i++) {
        const { notification } = yield* sentNotification(agent.client.notifications.create({ payload: { title: `n${i}`, body: `**body** ${i}`, bodyFormat: "markdown" } }))
        sent.push(notification.id)
      }
      const first = yield* agent.client.history.activityFeed()
      assert.strictEqual(first.page, 1)
      assert.strictEqual(first.pageSize, 20)
      assert.strictEqual(first.total, 22)
      assert.deepStrictEqual(first.items.map((i) => i.id.length > 0 && i.title), sent.slice(2).reverse().map((_, i) => `n${21 - i}`))
      assert.strictEqual(first.items[0]?.kind, "notification")
      assert.strictEqual(first.items[0]?.sourceName, "test agent")
      assert.strictEqual(first.items[0]?.detail, "body 21")
      const second = yield* agent.client.history.activityFeed({ query: { page: 2 } })
      assert.deepStrictEqual(second.items.map((i) => i.title), ["n1", "n0"])
      assert.lengthOf((yield* agent.client.history.activityFeed({ query: { page: 3 } })).items, 0)

      const other = yield* makeAgent(["events:read"])
      assert.strictEqual((yield* other.client.history.activityFeed()).total, 0)
      const bad = yield* rawFetch("/api/agent/activity-feed?page=0", { headers: { authorization: `Bearer ${agent.secret}` } })
      assert.strictEqual(bad.status, 400)
    }))
})
