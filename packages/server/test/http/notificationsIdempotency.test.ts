/** POST /notifications with an Idempotency-Key: replays, reuse with another body, failed requests, bad keys. */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { makeAgent, rawFetch, registerDevice, TestServerLayer } from "../../../../test/support/server.ts"
import { deliveries } from "./notificationsSupport.ts"
import { sentNotification } from "../../../../test/support/notifications.ts"

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("notifications with an Idempotency-Key", (it) => {
  const post = (secret: string, key: string | undefined, body: unknown) =>
    rawFetch("/api/agent/notifications", {
      method: "POST",
      headers: {
        authorization: `Bearer ${secret}`,
        "content-type": "application/json",
        ...(key !== undefined ? { "idempotency-key": key } : {})
      },
      body: JSON.stringify(body)
    })

  it.effect("the same body replays the first answer (200, idempotent) and pushes once", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["notifications:send"])
      const phone = yield* registerDevice(agent, "iphone-")
      const first = yield* sentNotification(agent.client.notifications.create({
        headers: { "idempotency-key": "deploy-42" },
        payload: { title: "Deployed", body: "v42" }
      }))
      assert.isUndefined(first.idempotent)
      const replay = yield* post(agent.secret, "deploy-42", { body: "v42", title: "Deployed" })
      assert.strictEqual(replay.status, 200)
      const body = replay.body as { notification: { id: string }; accepted: number; idempotent: boolean }
      assert.strictEqual(body.notification.id, first.notification.id)
      assert.strictEqual(body.accepted, 1)
      assert.isTrue(body.idempotent)
      const typed = yield* sentNotification(agent.client.notifications.create({
        headers: { "idempotency-key": "deploy-42" },
        payload: { title: "Deployed", body: "v42" }
      }))
      assert.isTrue(typed.idempotent)
      assert.lengthOf(yield* deliveries(agent, phone.id), 1)
    }))

  it.effect("the key with another body answers 422; other accounts have their own keys", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["notifications:send"])
      assert.strictEqual((yield* post(agent.secret, "k", { title: "a", body: "b" })).status, 201)
      const reused = yield* post(agent.secret, "k", { title: "a", body: "different" })
      assert.strictEqual(reused.status, 422)
      assert.strictEqual((reused.body as { code: string }).code, "IDEMPOTENCY_KEY_REUSED")
      const other = yield* makeAgent(["notifications:send"])
      assert.strictEqual((yield* post(other.secret, "k", { title: "a", body: "different" })).status, 201)
    }))

  it.effect("a request that failed does not hold its key; malformed keys are refused", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["notifications:send"])
      const failed = yield* post(agent.secret, "retry-me", { title: "a", body: "b", deviceIds: ["dev_notmine000"] })
      assert.strictEqual(failed.status, 404)
      assert.strictEqual((yield* post(agent.secret, "retry-me", { title: "a", body: "b" })).status, 201)
      for (const key of ["", "has space", "x".repeat(256), "naïve"]) {
        const response = yield* post(agent.secret, key, { title: "a", body: "b" })
        assert.strictEqual(response.status, 400, JSON.stringify(key))
      }
    }))
})
