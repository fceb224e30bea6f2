/**
 * Web Push through the whole service, over HTTP: a browser fetches the VAPID
 * key, subscribes at a push service on loopback and registers the
 * subscription as a `web` device; an agent's notification and prompt reach
 * it encrypted (the push service decrypts them with the subscription's
 * private key); answering the prompt closes its notification while the
 * agent's wait returns. Registration refuses subscriptions that could never
 * receive a push, each issue naming its field.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Fiber, Layer } from "effect"
import { eventually } from "../../../../test/support/eventually.ts"
import { sentNotification } from "../../../../test/support/notifications.ts"
import { makeAgent, makePerson, personClient, rawFetch, testServerLayer } from "../../../../test/support/server.ts"
import { FakePushService, makeSubscription, subscriptionJson } from "./webPushSupport.ts"
import type { TestSubscription } from "./webPushSupport.ts"

type Agent = Effect.Success<ReturnType<typeof makeAgent>>
type App = Agent["app"]

const TestLayer = testServerLayer({ HERALD_ALLOW_PRIVATE_NETWORK_TARGETS: "1" }).pipe(Layer.provideMerge(FakePushService.layer))

let seq = 0
/** This browser: the service's key fetched, a subscription made with it at the push service, registered. */
const enableNotifications = (app: App, name = "Firefox on a laptop") =>
  Effect.gen(function*() {
    const service = yield* FakePushService
    const { publicKey } = yield* app.devices.webPushKey()
    const subscription = service.subscribe(`browser-${++seq}-${Date.now()}`, publicKey)
    const device = yield* app.devices.register({ payload: { platform: "web", deviceName: name, subscription: subscriptionJson(subscription) } })
    return { device, subscription, path: subscription.endpoint.slice(`${service.origin}/push/`.length) }
  })

const post = (session: string, body: unknown) =>
  rawFetch("/api/app/devices", {
    method: "POST",
    headers: { authorization: `Bearer ${session}`, "content-type": "application/json" },
    body: JSON.stringify(body)
  })

const issuesOf = (body: unknown) => (body as { code: string; issues: ReadonlyArray<{ path: string; message: string }> })

layer(TestLayer, { timeout: "120 seconds", excludeTestServices: true })("web push over HTTP", (it) => {
  it.effect("a browser registers its subscription with the served key; registering it again updates that device", () =>
    Effect.gen(function*() {
      const { session } = yield* makePerson("ada")
      const app = yield* personClient(session)
      const { publicKey } = yield* app.devices.webPushKey()
      assert.match(publicKey, /^B[A-Za-z0-9_-]{86}$/)
      const { device, subscription } = yield* enableNotifications(app)
      assert.deepInclude(device, { platform: "web", deviceName: "Firefox on a laptop", active: true, liveActivitiesCapable: false })
      const again = yield* app.devices.register({
        payload: { platform: "web", deviceName: "Firefox", subscription: subscriptionJson(subscription), liveActivitiesCapable: true }
      })
      assert.strictEqual(again.id, device.id)
      assert.deepInclude(again, { deviceName: "Firefox", liveActivitiesCapable: true })
      const listed = yield* rawFetch("/api/app/devices", { headers: { authorization: `Bearer ${session}` } })
      assert.deepStrictEqual((listed.body as { items: Array<{ id: string }> }).items.map((d) => d.id), [device.id])
      // The subscription is a capability to push to the browser: it is never read back.
      assert.notInclude(JSON.stringify(listed.body), subscription.endpoint)
      assert.notInclude(JSON.stringify(listed.body), subscription.keys.auth)
    }))

  it.effect("PATCH /devices/{id} renames any device of the person; another person's is 404 like a missing one", () =>
    Effect.gen(function*() {
      const ada = yield* makePerson("ada")
      const bob = yield* makePerson("bob")
      const adaApp = yield* personClient(ada.session)
      const bobApp = yield* personClient(bob.session)
      const { device } = yield* enableNotifications(adaApp)
      const renamed = yield* adaApp.devices.rename({ params: { id: device.id }, payload: { deviceName: "Work laptop" } })
      assert.strictEqual(renamed.deviceName, "Work laptop")
      const cleared = yield* adaApp.devices.rename({ params: { id: device.id }, payload: { deviceName: null } })
      assert.isNull(cleared.deviceName)
      const phone = yield* adaApp.devices.register({ payload: { platform: "ios", pushToken: `ios-${Date.now()}` } })
      assert.strictEqual((yield* adaApp.devices.rename({ params: { id: phone.id }, payload: { deviceName: "iPhone" } })).deviceName, "iPhone")
      const foreign = yield* rawFetch(`/api/app/devices/${device.id}`, {
        method: "PATCH",
        headers: { authorization: `Bearer ${bob.session}`, "content-type": "application/json" },
        body: JSON.stringify({ deviceName: "mine now" })
      })
      const missing = yield* rawFetch("/api/app/devices/dev_0000000000000000000000000a", {
        method: "PATCH",
        headers: { authorization: `Bearer ${bob.session}`, "content-type": "application/json" },
        body: JSON.stringify({ deviceName: "mine now" })
      })
      assert.strictEqual(foreign.status, 404)
      assert.deepStrictEqual(foreign.body, missing.body)
      assert.strictEqual((yield* bobApp.devices.list()).items.length, 0)
    }))

  it.effect("registration names what is wrong with a subscription, each shape checked on its own", () =>
    Effect.gen(function*() {
      const { session } = yield* makePerson()
      const good = makeSubscription("https://push.example.test/sub/1")
      const cases: ReadonlyArray<readonly [unknown, ReadonlyArray<{ path: string; message: string }>]> = [
        [{ platform: "web" }, [{ path: "body.subscription", message: "Missing key" }]],
        [{ platform: "ios", subscription: subscriptionJson(good) }, [
          { path: "body.subscription", message: "Expected no excess property" },
          { path: "body.pushToken", message: "Missing key" }
        ]],
        [{ platform: "blackberry", pushToken: "x" }, [{
          path: "body",
          message: "Expected platform \"ios\" or \"android\" with a pushToken, or \"web\" with a subscription"
        }]],
        [{ platform: "web", subscription: { ...subscriptionJson(good), keys: { p256dh: "BAAA", auth: "short" } } }, [
          { path: "body.subscription.keys.p256dh", message: "Expected an uncompressed P-256 public key: 65 bytes in base64url" },
          { path: "body.subscription.keys.auth", message: "Expected 16 bytes in base64url" }
        ]],
        [{ platform: "web", subscription: { ...subscriptionJson(good), endpoint: "ftp://push.example.test/x" } }, [
          { path: "body.subscription.endpoint", message: "Expected an https:// URL (the push service endpoint)" }
        ]],
        // Well formed, but no browser made it: 65 bytes that are not a point of the curve.
        [{ platform: "web", subscription: { ...subscriptionJson(good), keys: { ...good.keys, p256dh: Buffer.concat([Buffer.from([4]), Buffer.alloc(64, 7)]).toString("base64url") } } }, [
          { path: "body.subscription.keys.p256dh", message: "Expected a public key on the P-256 curve" }
        ]],
        [{ platform: "web", subscription: { ...subscriptionJson(good), endpoint: "http://push.example.test/x" } }, [
          { path: "body.subscription.endpoint", message: "only https:// URLs are allowed (plain http only to loopback, in local development)" }
        ]],
        [{ platform: "web", subscription: { ...subscriptionJson(good), endpoint: `https://push.example.test/${"x".repeat(2048)}` } }, [
          { path: "body.subscription.endpoint", message: "Expected a value with a length of at most 2048" }
        ]]
      ]
      for (const [body, issues] of cases) {
        const answer = yield* post(session, body)
        assert.strictEqual(answer.status, 400, JSON.stringify(body).slice(0, 200))
        assert.strictEqual(issuesOf(answer.body).code, "VALIDATION_FAILED")
        assert.deepStrictEqual(issuesOf(answer.body).issues, issues, JSON.stringify(body).slice(0, 200))
      }
      assert.strictEqual((yield* post(session, { platform: "web", subscription: subscriptionJson(good) })).status, 201)
    }))

  it.effect("an agent's notification reaches the browser, encrypted to its subscription", () =>
    Effect.gen(function*() {
      const service = yield* FakePushService
      const agent = yield* makeAgent(["notifications:send"])
      const { path } = yield* enableNotifications(agent.app)
      const created = yield* sentNotification(agent.client.notifications.create({
        payload: { title: "Build finished", body: "All 212 tests passed." }
      }))
      assert.strictEqual(created.accepted, 1)
      const [received] = service.received(path)
      assert.deepStrictEqual(received!.payload, {
        v: 1,
        type: "alert",
        tag: created.notification.id,
        title: "Build finished",
        body: "All 212 tests passed.",
        url: null,
        ref: `notification:${created.notification.id}`,
        priority: "high",
        interaction: null,
        data: {}
      })
      assert.deepStrictEqual(service.failures, [])
    }))

  it.effect("a prompt reaches the browser with its kind; answering it closes the notification and the agent's wait returns", () =>
    Effect.gen(function*() {
      const service = yield* FakePushService
      const agent = yield* makeAgent(["interactions:create", "interactions:read"])
      const { path } = yield* enableNotifications(agent.app)
      const { interaction } = yield* agent.client.interactions.create({
        payload: { kind: "approval", title: "Deploy v2 to production?", prompt: "3 migrations, 12 commits." }
      })
      const alert = service.received(path)[0]!.payload as { type: string; tag: string; interaction: unknown; data: Record<string, string> }
      assert.deepInclude(alert, { type: "alert", tag: interaction.id, interaction: { id: interaction.id, kind: "approval" } })
      assert.strictEqual(alert.data.actionDigest, interaction.actionDigest)
      const waiting = yield* Effect.forkChild(agent.client.interactions.wait({ params: { id: interaction.id }, query: { timeout: 30 } }))
      yield* agent.app.interactions.answer({ params: { id: interaction.id }, payload: { status: "approved" } })
      const answered = yield* Fiber.join(waiting)
      assert.strictEqual(answered.status, "approved")
      const pushes = yield* eventually(Effect.sync(() => service.received(path)), (all) => all.length === 2)
      assert.deepStrictEqual(pushes[1]!.payload, { v: 1, type: "close", tag: interaction.id })
      assert.strictEqual(pushes[1]!.headers.topic, pushes[0]!.headers.topic)
    }))

  it.effect("a browser that shows live activities gets each update as a card under the activity's tag", () =>
    Effect.gen(function*() {
      const service = yield* FakePushService
      const agent = yield* makeAgent(["activities:read", "activities:write"])
      const { publicKey } = yield* agent.app.devices.webPushKey()
      const subscription = service.subscribe(`cards-${Date.now()}`, publicKey)
      const path = subscription.endpoint.slice(`${service.origin}/push/`.length)
      yield* agent.app.devices.register({
        payload: { platform: "web", subscription: subscriptionJson(subscription), liveActivitiesCapable: true }
      })
      const started = yield* agent.client.activities.start({ payload: { props: { title: "Deploy", status: "building" } } })
      assert.strictEqual(started.accepted, 1)
      yield* agent.client.activities.update({
        params: { identifier: started.activity.id },
        payload: { props: { status: "migrating", progress: 0.5 }, priority: "high" }
      })
      const cards = yield* eventually(Effect.sync(() => service.received(path)), (all) => all.length === 2)
      const [start, update] = cards.map((c) => c.payload as { type: string; tag: string; title: string; body: string; data: Record<string, string> })
      assert.deepInclude(start!, { type: "card", tag: started.activity.id, title: "Deploy", body: "building" })
      assert.strictEqual(start!.data.event, "start")
      assert.deepInclude(update!, { type: "card", tag: started.activity.id, title: "Deploy", body: "migrating · 50%" })
      assert.strictEqual(update!.data.event, "update")
      assert.strictEqual(cards[0]!.headers.topic, cards[1]!.headers.topic)
    }))

  it.effect("a subscription the push service says is gone marks the browser inactive", () =>
    Effect.gen(function*() {
      const service = yield* FakePushService
      const agent = yield* makeAgent(["notifications:send"])
      const { device, path } = yield* enableNotifications(agent.app)
      service.answer(path, { status: 410 })
      const created = yield* sentNotification(agent.client.notifications.create({ payload: { title: "t", body: "b" } }))
      assert.strictEqual(created.accepted, 0)
      const listed = yield* agent.app.devices.list()
      assert.isFalse(listed.items.find((d) => d.id === device.id)!.active)
    }))
})

layer(testServerLayer(), { timeout: "120 seconds", excludeTestServices: true })("web push registration without the private-network switch", (it) => {
  it.effect("an endpoint on a loopback or private address is refused; a public name is judged at each push", () =>
    Effect.gen(function*() {
      const { session } = yield* makePerson()
      const subscription = (endpoint: string): TestSubscription => makeSubscription(endpoint)
      for (const endpoint of ["https://10.0.0.5/push/1", "https://127.0.0.1/push/1", "https://[fd00::5]/push/1", "https://localhost/push/1"]) {
        const answer = yield* post(session, { platform: "web", subscription: subscriptionJson(subscription(endpoint)) })
        assert.strictEqual(answer.status, 400, endpoint)
        assert.strictEqual(issuesOf(answer.body).issues[0]!.path, "body.subscription.endpoint")
        assert.match(issuesOf(answer.body).issues[0]!.message, /private or loopback address/)
      }
      const named = yield* post(session, { platform: "web", subscription: subscriptionJson(subscription("https://push.example.test/push/1")) })
      assert.strictEqual(named.status, 201)
    }))
})
