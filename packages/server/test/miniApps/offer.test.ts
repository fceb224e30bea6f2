/**
 * Offers over HTTP: a push of a package's availability to the owner's own
 * devices only (sandbox deliveries), carrying the package id and install URL
 * and never installing; one offer a minute per package (429 with
 * `Retry-After`, concurrent offers send one push); packages that are not
 * installable are refused.
 */
import { assert, layer } from "@effect/vitest"
import type { SandboxDelivery } from "@herald/api"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { eventually } from "../../../../test/support/eventually.ts"
import { makeAgent, registerDevice, TestServerLayer } from "../../../../test/support/server.ts"
import { call, seedPackage } from "./reviewSupport.ts"
import type { State } from "./reviewSupport.ts"

const rw = ["apps:read", "apps:write"] as const

type Agent = Effect.Success<ReturnType<typeof makeAgent>>

/** The push's data: `herald` of the APNs payload (iOS), `data` of the FCM message (Android). */
const herald = (d: SandboxDelivery) => {
  const payload = d.payload as { herald?: Record<string, string>; data?: Record<string, string> }
  return payload.herald ?? payload.data ?? {}
}

/** The offers of `packageId` the sandbox sent to one of the agent's devices. */
const offersTo = (agent: Agent, deviceId: string, packageId: string) =>
  Effect.map(agent.app.devices.deliveries({ params: { id: deviceId } }), (r) =>
    r.items.filter((d) => d.pushType === "alert" && herald(d).packageId === packageId)).pipe(Effect.orDie)

const offer = (agent: Agent, packageId: string) => call(agent.secret, "POST", `/mini-apps/${packageId}/offer`)

/** Time passes: the package's last offer moves `seconds` into the past. */
const offeredSecondsAgo = (packageId: string, seconds: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`UPDATE mini_app_packages SET last_offered_at = now() - make_interval(secs => ${seconds}) WHERE id = ${packageId}`
  }).pipe(Effect.orDie)

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("mini-app offers", (it) => {
  it.effect("an offer pushes to each of the owner's devices once, never to another person's; a second within the minute is 429", () =>
    Effect.gen(function*() {
      const owner = yield* makeAgent([...rw])
      const other = yield* makeAgent([...rw])
      const phone = yield* registerDevice(owner, "offer-phone")
      const tablet = yield* registerDevice(owner, "offer-tablet", "android")
      const otherPhone = yield* registerDevice(other, "offer-other")
      const id = yield* seedPackage(owner)

      const first = yield* offer(owner, id)
      assert.strictEqual(first.status, 200, JSON.stringify(first.body))
      assert.strictEqual(first.body.packageId, id)
      assert.strictEqual(first.body.devices, 2)
      assert.match(first.body.installUrl, new RegExp(`/mini-apps/${id}/install$`))

      const onPhone = yield* eventually(offersTo(owner, phone.id, id), (d) => d.length >= 1)
      yield* eventually(offersTo(owner, tablet.id, id), (d) => d.length >= 1)
      const push = herald(onPhone[0]!)
      assert.strictEqual(push.installUrl, first.body.installUrl)
      assert.strictEqual(push.kind, "mini-app-offer")
      assert.strictEqual(push.url, first.body.installUrl, "the alert opens the install page; nothing installs by itself")

      const second = yield* offer(owner, id)
      assert.strictEqual(second.status, 429)
      assert.strictEqual(second.body.code, "RATE_LIMITED")
      const retryAfter = Number(second.headers.get("retry-after"))
      assert.isTrue(retryAfter >= 1 && retryAfter <= 60, `Retry-After ${retryAfter}`)

      // Exactly one push per owner device, none to the other person (whose own offer of the id is concealed).
      assert.lengthOf(yield* offersTo(owner, phone.id, id), 1)
      assert.lengthOf(yield* offersTo(owner, tablet.id, id), 1)
      assert.strictEqual((yield* offer(other, id)).status, 404)
      const otherDeliveries = yield* other.app.devices.deliveries({ params: { id: otherPhone.id } })
      assert.lengthOf(otherDeliveries.items, 0)

      // The review list shows the last offer.
      const review = yield* owner.client.miniAppReview.review()
      assert.strictEqual(review.items.find((e) => e.packageId === id)?.lastOfferedAt, first.body.offeredAt)
    }))

  it.effect("the minute is per package and ends: another package may be offered at once, this one after 60 s", () =>
    Effect.gen(function*() {
      const owner = yield* makeAgent([...rw])
      const phone = yield* registerDevice(owner, "offer-minute")
      const id = yield* seedPackage(owner)
      const another = yield* seedPackage(owner)
      assert.strictEqual((yield* offer(owner, id)).status, 200)
      assert.strictEqual((yield* offer(owner, another)).status, 200)

      yield* offeredSecondsAgo(id, 50)
      const early = yield* offer(owner, id)
      assert.strictEqual(early.status, 429)
      assert.include(["10", "11"], early.headers.get("retry-after"))

      // A second past the minute: the stamp is the database's clock (microseconds), the check the server's (milliseconds).
      yield* offeredSecondsAgo(id, 61)
      const late = yield* offer(owner, id)
      assert.strictEqual(late.status, 200, JSON.stringify(late.body))
      yield* eventually(offersTo(owner, phone.id, id), (d) => d.length === 2)
    }))

  it.effect("concurrent offers of one package: one answers 200 and one push is sent, the rest 429", () =>
    Effect.gen(function*() {
      const owner = yield* makeAgent([...rw])
      const phone = yield* registerDevice(owner, "offer-race")
      const id = yield* seedPackage(owner)
      const answers = yield* Effect.all(Array.from({ length: 6 }, () => offer(owner, id)), { concurrency: "unbounded" })
      const statuses = answers.map((a) => a.status).sort()
      assert.deepStrictEqual(statuses, [200, 429, 429, 429, 429, 429])
      yield* eventually(offersTo(owner, phone.id, id), (d) => d.length >= 1)
      const sql = yield* SqlClient.SqlClient
      const receipts = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM push_receipts WHERE origin = 'mini-app' AND item_id = ${id}`
      assert.strictEqual(receipts[0]!.n, 1)
      assert.lengthOf(yield* offersTo(owner, phone.id, id), 1)
    }))

  it.effect("a blocked, disabled or removed package cannot be offered (409), and nothing is pushed", () =>
    Effect.gen(function*() {
      const owner = yield* makeAgent([...rw])
      const phone = yield* registerDevice(owner, "offer-refused")
      for (const state of ["blocked", "disabled", "removed"] as const satisfies ReadonlyArray<State>) {
        const id = yield* seedPackage(owner, state)
        const answer = yield* offer(owner, id)
        assert.strictEqual(answer.status, 409, state)
        assert.strictEqual(answer.body.code, "CONFLICT")
        assert.lengthOf(yield* offersTo(owner, phone.id, id), 0)
      }
    }))

  it.effect("an account without devices may offer: nothing is queued", () =>
    Effect.gen(function*() {
      const owner = yield* makeAgent([...rw])
      const id = yield* seedPackage(owner)
      const answer = yield* owner.client.miniAppReview.offer({ params: { packageId: id } })
      assert.strictEqual(answer.devices, 0)
      assert.strictEqual(answer.accepted, 0)
    }))
})
