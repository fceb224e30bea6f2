/**
 * A device shows at most five live activities: every path that can put a
 * sixth on a full device answers 422 `ACTIVITY_CAPACITY_EXCEEDED` with
 * `limit: 5` (the status on the wire, read raw): a plain start, a start with
 * a key, a replacing start with nothing to replace and one whose replaced
 * activity is on another device, a retried start with an `Idempotency-Key`,
 * and a prompt's interactive card, with and without a key.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { makeAgent, rawFetch, TestServerLayer } from "../../../../test/support/server.ts"
import { phone, scopes, start } from "./activitySupport.ts"

const full = { error: "Every target device already shows 5 live activities.", code: "ACTIVITY_CAPACITY_EXCEEDED", limit: 5 }

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("live-activity capacity", (it) => {
  it.effect("a sixth live activity on a full device answers 422 ACTIVITY_CAPACITY_EXCEEDED on every path", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes, "interactions:create", "interactions:read"])
      const crowded = yield* agent.app.devices.register({
        payload: { platform: "android", pushToken: `cap-${Date.now()}`, liveActivitiesCapable: true, interactiveLiveActivitiesCapable: true }
      })
      const elsewhere = yield* phone(agent, "android")
      yield* start(agent, { key: "elsewhere", props: { title: "On the other phone" }, deviceIds: [elsewhere.id] })
      for (let n = 0; n < 5; n++) yield* start(agent, { props: { title: `filler ${n}` }, deviceIds: [crowded.id] })

      const post = (path: string, body: unknown, idempotencyKey?: string) =>
        rawFetch(path, {
          method: "POST",
          headers: {
            authorization: `Bearer ${agent.secret}`,
            "content-type": "application/json",
            ...(idempotencyKey === undefined ? {} : { "idempotency-key": idempotencyKey })
          },
          body: JSON.stringify(body)
        })
      const sixth = { props: { title: "sixth" }, deviceIds: [crowded.id] }
      const card = { kind: "approval", title: "Merge?", prompt: "CI is green.", presentation: "live_activity" }
      const paths = [
        ["plain start", post("/api/agent/activities", sixth)],
        ["start with a key", post("/api/agent/activities", { ...sixth, key: "new-key" })],
        ["replacing start, nothing to replace", post("/api/agent/activities", { ...sixth, key: "other-key", replace: true })],
        ["replacing start, the replaced one elsewhere", post("/api/agent/activities", { ...sixth, key: "elsewhere", replace: true })],
        ["start with an Idempotency-Key", post("/api/agent/activities", sixth, "cap-1")],
        ["the same start retried", post("/api/agent/activities", sixth, "cap-1")],
        ["prompt card", post("/api/agent/interactions", card)],
        ["prompt card with an Idempotency-Key", post("/api/agent/interactions", card, "cap-2")]
      ] as const
      for (const [name, request] of paths) {
        const answer = yield* request
        assert.deepStrictEqual([answer.status, answer.body], [422, full], name)
      }
      // None of them changed anything: the replaced activity is still live, no prompt was created.
      assert.strictEqual((yield* agent.client.activities.get({ params: { identifier: "elsewhere" } })).status, "active")
      assert.lengthOf((yield* agent.client.interactions.list()).items, 0)
    }))
})
