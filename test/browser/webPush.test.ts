/**
 * "Notify this browser" and the service worker in Chromium, end to end:
 * the devices page subscribes (the test stands in for the browser's push
 * service, pushStandIn.ts) and registers a device of platform `web`; an agent
 * asks an approval; Herald's encrypted push reaches the fake push service,
 * which checks VAPID and decrypts it with the subscription's private key
 * (an RFC 8291 decryptor over node:crypto, independent of Herald's library);
 * the plaintext goes to the service worker as the browser would deliver it
 * (CDP `ServiceWorker.deliverPushMessage`); the notification shows Approve and
 * Deny; the worker's click behaviour answers "approved" through the Person API
 * with no page open on the prompt; the agent's wait returns `approved`, and
 * the `close` push that follows the answer closes the notification.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { randomBytes } from "node:crypto"
import type { CDPSession, Page, Worker } from "playwright-core"
import type { WebPushPayload } from "../../packages/server/src/push/WebPushPayload.ts"
import type { ReceivedPush } from "../../packages/server/test/push/webPushSupport.ts"
import { agentOf, Harness, harnessLayer, inTab, makePerson, personApi, signedInTab, until } from "./support/harness.ts"
import { standInForPushService } from "./support/pushStandIn.ts"

interface Shown {
  readonly title: string
  readonly body: string
  readonly tag: string
  readonly actions: ReadonlyArray<{ readonly action: string; readonly title: string }>
}

/** A shown notification as the page sees it (the repository's types have no DOM). */
interface BrowserNotification extends Shown {
  readonly close: () => void
}
interface Registration {
  readonly getNotifications: (filter?: { readonly tag: string }) => Promise<ReadonlyArray<BrowserNotification>>
}

/** The notifications the page's service worker registration shows now (with `tag`, those of that tag). */
const shownNotifications = (page: Page, tag: string) =>
  page.evaluate(async (tag) => {
    const { serviceWorker } = (globalThis as unknown as { navigator: { serviceWorker: { ready: Promise<Registration> } } }).navigator
    const shown = await (await serviceWorker.ready).getNotifications({ tag })
    return shown.map((n) => ({ title: n.title, body: n.body, tag: n.tag, actions: n.actions.map((a) => ({ action: a.action, title: a.title })) }))
  }, tag) as Promise<ReadonlyArray<Shown>>

/**
 * The service worker of `origin` as CDP sees it: its registration id, and a wait until its version is
 * activated and running. CDP drops a push delivered to a worker that is not (yet, or no longer) running;
 * a browser's push service would hold it until the worker runs, so the test waits as the browser would.
 */
const serviceWorkerOf = async (cdp: CDPSession, origin: string) => {
  const registrations = new Map<string, string>()
  const versions = new Map<string, { readonly registrationId: string; readonly status: string; readonly runningStatus: string }>()
  cdp.on("ServiceWorker.workerRegistrationUpdated", (event) => {
    for (const r of event.registrations) if (!r.isDeleted) registrations.set(r.scopeURL, r.registrationId)
  })
  cdp.on("ServiceWorker.workerVersionUpdated", (event) => {
    for (const v of event.versions) versions.set(v.versionId, v)
  })
  await cdp.send("ServiceWorker.enable")
  const registrationId = (await until("the service worker registration", async () => registrations.get(`${origin}/`), (id) => id !== undefined))!
  const states = () => [...versions.values()].filter((v) => v.registrationId === registrationId).map((v) => `${v.status}/${v.runningStatus}`)
  const running = async () => {
    await cdp.send("ServiceWorker.startWorker", { scopeURL: `${origin}/` })
    await until("the service worker activated and running", async () => states(), (now) => now.includes("activated/running"))
  }
  return { registrationId, running, states }
}

/**
 * Hands a push's decrypted payload to the service worker, as the browser does when its push service hands
 * it over, and waits until the page sees its effect (`shows`: the notifications of `tag` as they should be).
 * CDP's `deliverPushMessage` answers before the event runs and drops a push the browser fails to dispatch
 * (its result goes nowhere), where a push service redelivers what the browser did not take: so does this, at
 * most three times. The worker's handling is idempotent (a tag replaces, a close of a closed tag is a no-op),
 * and a worker that mishandles the payload fails all three.
 */
const deliver = async (
  cdp: CDPSession,
  origin: string,
  worker: { readonly registrationId: string; readonly running: () => Promise<void>; readonly states: () => ReadonlyArray<string> },
  push: ReceivedPush,
  page: Page,
  tag: string,
  shows: (shown: ReadonlyArray<Shown>) => boolean
): Promise<ReadonlyArray<Shown>> => {
  const attempts: Array<string> = []
  for (let attempt = 1; ; attempt++) {
    await worker.running()
    await cdp.send("ServiceWorker.deliverPushMessage", { origin, registrationId: worker.registrationId, data: JSON.stringify(push.payload) })
    try {
      const shown = await until(`the ${(push.payload as WebPushPayload).type} push's effect`, () => shownNotifications(page, tag), shows, 8)
      if (attempts.length > 0) console.warn(`Web Push test: the browser took the push on delivery ${attempt} (${attempts.join("; ")})`)
      return shown
    } catch (error) {
      attempts.push(`delivery ${attempt}: ${error instanceof Error ? error.message : String(error)}, worker ${worker.states().join(", ")}`)
      if (attempt === 3) throw new Error(`the worker did not handle the push: ${attempts.join("; ")}`)
    }
  }
}

layer(harnessLayer(), { timeout: "180 seconds", excludeTestServices: true })("Web Push in the browser", (it) => {
  it.effect("notify this browser, a push for a prompt, its Approve button answers and the close push closes it", () =>
    Effect.gen(function*() {
      const { origin, push: pushService } = yield* Harness
      const person = yield* makePerson("Browser Owner")
      const app = yield* personApi(person.session)
      const { publicKey } = yield* app.devices.webPushKey()
      const path = `browser-${randomBytes(6).toString("hex")}`
      // A subscription only Herald's VAPID key may push to (RFC 8292 §3), as browsers make them.
      const subscription = pushService.subscribe(path, publicKey)
      const tab = yield* signedInTab(person, { permissions: ["notifications"] })
      yield* Effect.promise(() => standInForPushService(tab.context, { endpoint: subscription.endpoint, expirationTime: null, keys: subscription.keys }))

      yield* inTab(tab, async (page) => {
        await page.goto("/devices")
        await page.getByRole("button", { name: "Notify this browser" }).click()
        await page.getByText("This browser is notified").waitFor()
        const asked = await page.evaluate(() => (globalThis as unknown as { heraldPushStandIn: { subscribedWith: Array<string> } }).heraldPushStandIn.subscribedWith)
        assert.deepStrictEqual(asked, [publicKey], "subscribed with Herald's VAPID public key")
      })
      const devices = (yield* app.devices.list()).items
      assert.strictEqual(devices.length, 1)
      assert.deepStrictEqual([devices[0]!.platform, devices[0]!.active], ["web", true])

      const cdp = yield* Effect.promise(() => tab.context.newCDPSession(tab.page))
      const serviceWorker = yield* Effect.promise(() => serviceWorkerOf(cdp, origin))

      const { client: agent } = yield* agentOf(person, ["interactions:create", "interactions:read"])
      const { interaction } = yield* agent.interactions.create({
        payload: { kind: "approval", title: "Merge the pull request?", prompt: "#418 Fix the login redirect." }
      })
      const waiting = yield* Effect.forkChild(agent.interactions.wait({ params: { id: interaction.id }, query: { timeout: 60 } }))

      // Herald's push, as the push service took it: signed, encrypted, decrypted here with the browser's keys.
      const [alert] = yield* Effect.promise(() => until("the prompt's push at the push service", async () => pushService.received(path), (r) => r.length >= 1))
      assert.deepStrictEqual(pushService.failures, [])
      assert.strictEqual(alert!.headers["content-encoding"], "aes128gcm")
      assert.strictEqual(alert!.vapid.k, publicKey)
      assert.strictEqual(alert!.vapid.claims.aud, pushService.origin)
      const payload = alert!.payload as WebPushPayload
      assert.strictEqual(payload.type, "alert")
      if (payload.type !== "alert") return
      assert.deepStrictEqual(payload.interaction, { id: interaction.id, kind: "approval" })
      assert.strictEqual(payload.title, "Merge the pull request?")
      assert.isAtMost(Buffer.byteLength(JSON.stringify(payload)), 3000)

      // The browser hands the payload to the service worker: a notification with the prompt's two answers.
      const [shown] = yield* inTab(tab, (page) => deliver(cdp, origin, serviceWorker, alert!, page, payload.tag, (n) => n.length === 1))
      assert.strictEqual(shown!.title, "Merge the pull request?")
      assert.include(shown!.body, "#418 Fix the login redirect.")
      assert.deepStrictEqual(shown!.actions, [{ action: "approved", title: "Approve" }, { action: "denied", title: "Deny" }])

      // No CDP call clicks a notification: the worker's click behaviour is called as the listener calls it.
      yield* inTab(tab, async (page) => {
        await page.goto("/devices")
        const worker: Worker = tab.context.serviceWorkers()[0] ?? await tab.context.waitForEvent("serviceworker")
        const outcome = await worker.evaluate(async ({ tag, action }) => {
          const scope = globalThis as unknown as {
            answerFromNotification?: (notification: BrowserNotification, action: string) => Promise<unknown>
            registration: Registration
          }
          if (typeof scope.answerFromNotification !== "function") {
            return "sw.js defines no answerFromNotification(notification, action) in the worker's global scope"
          }
          const [notification] = await scope.registration.getNotifications({ tag })
          if (notification === undefined) return "the notification is not shown"
          await scope.answerFromNotification(notification, action)
          return "answered"
        }, { tag: payload.tag, action: "approved" })
        assert.strictEqual(outcome, "answered")
      })
      const answered = yield* Fiber.join(waiting)
      assert.deepStrictEqual([answered.id, answered.status], [interaction.id, "approved"])

      // Answered: Herald withdraws the prompt's notification everywhere with a `close` of the same tag.
      const close = yield* Effect.promise(() =>
        until("the close push", async () => pushService.received(path).find((p) => (p.payload as WebPushPayload).type === "close"), (p) => p !== undefined))
      assert.deepStrictEqual(close!.payload, { v: 1, type: "close", tag: payload.tag })
      yield* inTab(tab, (page) => deliver(cdp, origin, serviceWorker, close!, page, payload.tag, (n) => n.length === 0))

      // A yes/no prompt gets its own two answers.
      const seen = pushService.received(path).length
      const { interaction: question } = yield* agent.interactions.create({
        payload: { kind: "yes_no", title: "Is the build green?", prompt: "CI finished on main." }
      })
      const [asked] = yield* Effect.promise(() =>
        until("the yes/no push", async () => pushService.received(path).slice(seen), (r) => r.length >= 1))
      const yesNo = asked!.payload as WebPushPayload
      assert.deepStrictEqual(yesNo.type === "alert" ? yesNo.interaction : null, { id: question.id, kind: "yes_no" })
      const [shownYesNo] = yield* inTab(tab, (page) => deliver(cdp, origin, serviceWorker, asked!, page, yesNo.tag, (n) => n.length === 1))
      assert.deepStrictEqual(shownYesNo!.actions, [{ action: "yes", title: "Yes" }, { action: "no", title: "No" }])
    }))
})
