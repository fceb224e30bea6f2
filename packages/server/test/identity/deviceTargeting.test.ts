/**
 * Device targeting, the one rule every capability picks devices by: the named
 * devices when all are the account's (else 404, the same for another
 * account's and a missing id), or all the account's active ones.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { makeAgent, registerDevice, TestServerLayer } from "../../../../test/support/server.ts"
import { DeviceTargeting } from "../../src/identity/DeviceTargeting.ts"

layer(TestServerLayer, { timeout: "60 seconds", excludeTestServices: true })("device targeting", (it) => {
  it.effect("no ids: the account's active devices in registration order; named: exactly those, inactive ones too", () =>
    Effect.gen(function*() {
      const targeting = yield* DeviceTargeting
      const agent = yield* makeAgent([])
      const first = yield* registerDevice(agent, "tok-a-")
      const second = yield* registerDevice(agent, "tok-b-", "android")
      const sold = yield* agent.app.devices.register({
        payload: { platform: "ios", deviceName: "sold", pushToken: `sold-${first.id}`, liveActivitiesCapable: true }
      })
      // Another person registers the same push token: the first owner's device is retired (inactive).
      const buyer = yield* makeAgent([])
      yield* buyer.app.devices.register({ payload: { platform: "ios", deviceName: "bought", pushToken: `sold-${first.id}` } })

      const all = yield* targeting.targets(agent.person.id)
      assert.deepStrictEqual(all.map((d) => d.id), [first.id, second.id])
      assert.deepStrictEqual(all.map((d) => d.userId), [agent.person.id, agent.person.id])

      const named = yield* targeting.targets(agent.person.id, [sold.id, first.id, sold.id])
      assert.deepStrictEqual(named.map((d) => [d.id, d.active, d.liveActivitiesCapable]), [
        [first.id, true, false],
        [sold.id, false, true]
      ])
      assert.deepStrictEqual(yield* targeting.targets(agent.person.id, []), [])
      assert.strictEqual((yield* targeting.owned(agent.person.id, sold.id)).id, sold.id)
    }))

  it.effect("a named device of another account or none at all: 404, the same for both", () =>
    Effect.gen(function*() {
      const targeting = yield* DeviceTargeting
      const agent = yield* makeAgent([])
      const mine = yield* registerDevice(agent, "tok-m-")
      const other = yield* makeAgent([])
      const theirs = yield* registerDevice(other, "tok-t-")
      const foreign = yield* Effect.flip(targeting.targets(agent.person.id, [mine.id, theirs.id]))
      const missing = yield* Effect.flip(targeting.targets(agent.person.id, [mine.id, "dev_missing"]))
      assert.deepStrictEqual(foreign, missing)
      assert.deepStrictEqual([foreign._tag, foreign.error], ["NotFound", "Device not found."])
      assert.strictEqual((yield* Effect.flip(targeting.owned(agent.person.id, theirs.id)))._tag, "NotFound")
    }))

  it.effect("activeOf: the active devices of several accounts; concurrent lookups each get their own", () =>
    Effect.gen(function*() {
      const targeting = yield* DeviceTargeting
      const a = yield* makeAgent([])
      const b = yield* makeAgent([])
      const none = yield* makeAgent([])
      const [a1, b1, a2] = [yield* registerDevice(a, "tok-x-"), yield* registerDevice(b, "tok-y-"), yield* registerDevice(a, "tok-z-")]
      const both = yield* targeting.activeOf([a.person.id, b.person.id, a.person.id])
      assert.deepStrictEqual(both.map((d) => d.id), [a1.id, b1.id, a2.id])
      assert.deepStrictEqual(yield* targeting.activeOf([]), [])
      const each = yield* Effect.all([a, b, none].map((x) => targeting.targets(x.person.id)), { concurrency: "unbounded" })
      assert.deepStrictEqual(each.map((ds) => ds.map((d) => d.id)), [[a1.id, a2.id], [b1.id], []])
    }))
})
