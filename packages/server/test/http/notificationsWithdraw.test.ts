/**
 * Withdrawing a notification over HTTP: the removal command goes to every
 * device that accepted the push, queued pushes are never sent, the three
 * outcomes (withdrawn, partial, 502), and the inbox copy marked read.
 */
import { assert, layer } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { SqlClient } from "effect/sql"
import { makeAgent, rawFetch, registerDevice, TestServerLayer } from "../../../../test/support/server.ts"
import { deliveries, inboxReadAt, setPushToken } from "./notificationsSupport.ts"
import { sentNotification } from "../../../../test/support/notifications.ts"

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("notification withdraw", (it) => {
  it.effect("withdraw: every device that accepted the push takes the removal command", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["notifications:send"])
      const phone = yield* registerDevice(agent, "iphone-")
      const pixel = yield* registerDevice(agent, "pixel-", "android")
      const { notification } = yield* sentNotification(agent.client.notifications.create({ payload: { title: "t", body: "b" } }))
      const withdrawn = yield* agent.client.notifications.withdraw({ params: { id: notification.id } })
      assert.deepStrictEqual(
        { ...withdrawn },
        { ok: true, notificationId: notification.id, status: "withdrawn", accepted: 2 }
      )
      const [, command] = yield* deliveries(agent, phone.id)
      assert.strictEqual(command?.pushType, "background")
      assert.strictEqual(command?.priority, 5)
      assert.deepStrictEqual(command?.payload, { aps: { "content-available": 1 }, herald: { withdraw: notification.id } })
      const [, androidCommand] = yield* deliveries(agent, pixel.id)
      assert.deepStrictEqual((androidCommand?.payload as { data: unknown }).data, { withdraw: notification.id })
      assert.isString(yield* inboxReadAt(notification.id))

      // The inbox's composite id names the same notification.
      const again = yield* agent.client.notifications.withdraw({ params: { id: `notification:${notification.id}` } })
      assert.strictEqual(again.status, "withdrawn")
    }))

  it.effect("withdraw: partial when some devices refuse the command, 502 when none accept it", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["notifications:send"])
      const first = yield* registerDevice(agent, "first-")
      const second = yield* registerDevice(agent, "second-")
      const { notification } = yield* sentNotification(agent.client.notifications.create({ payload: { title: "t", body: "b" } }))
      yield* setPushToken(second.id, "unavailable-now")
      const partial = yield* agent.client.notifications.withdraw({ params: { id: notification.id } })
      assert.strictEqual(partial.status, "withdraw_partial")
      assert.strictEqual(partial.accepted, 1)

      yield* setPushToken(first.id, "unregistered-now")
      const failed = yield* Effect.flip(agent.client.notifications.withdraw({ params: { id: notification.id } }))
      assert.strictEqual(failed._tag, "WithdrawFailed")
      assert.isString(yield* inboxReadAt(notification.id))
    }))

  it.effect("withdraw: 502 when no device had accepted the push; the inbox copy is read anyway", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["notifications:send"])
      const response = yield* rawFetch("/api/agent/notifications", {
        method: "POST",
        headers: { authorization: `Bearer ${agent.secret}`, "content-type": "application/json" },
        body: JSON.stringify({ title: "t", body: "b" })
      })
      const id = (response.body as { notification: { id: string } }).notification.id
      assert.isNull(yield* inboxReadAt(id))
      const withdraw = yield* rawFetch(`/api/agent/notifications/${id}/withdraw`, {
        method: "POST",
        headers: { authorization: `Bearer ${agent.secret}` }
      })
      assert.strictEqual(withdraw.status, 502)
      assert.strictEqual((withdraw.body as { code: string }).code, "WITHDRAW_FAILED")
      assert.isString(yield* inboxReadAt(id))
    }))

  it.effect("withdraw: a push still queued is never sent; one being sent gets the removal too", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const agent = yield* makeAgent(["notifications:send", "inbox:read"])
      const ok = yield* registerDevice(agent, "ok-")
      const flaky = yield* registerDevice(agent, "unavailable-")
      const inFlight = yield* registerDevice(agent, "inflight-")
      const { notification } = yield* sentNotification(agent.client.notifications.create({ payload: { title: "t", body: "b" } }))
      // As if the third device's push were at its provider right now.
      yield* sql`UPDATE push_receipts SET status = 'sending', claimed_by = 'rcp_other', claimed_at = now()
                 WHERE item_id = ${notification.id} AND device_id = ${inFlight.id}`
      yield* sql`UPDATE push_queue SET claimed_by = 'rcp_other', claimed_at = now()
                 WHERE receipt_id IN (SELECT id FROM push_receipts WHERE item_id = ${notification.id} AND device_id = ${inFlight.id})`
      const withdrawn = yield* agent.client.notifications.withdraw({ params: { id: notification.id } })
      assert.strictEqual(withdrawn.status, "withdrawn")
      assert.strictEqual(withdrawn.accepted, 2)
      const [, command] = yield* deliveries(agent, inFlight.id)
      assert.deepStrictEqual(command?.payload, { aps: { "content-available": 1 }, herald: { withdraw: notification.id } })
      assert.lengthOf(yield* deliveries(agent, ok.id), 2)

      const detail = yield* agent.client.inbox.get({ params: { id: `notification:${notification.id}` } })
      const queued = detail.pushReceipts?.find((r) => r.deviceId === flaky.id)
      assert.strictEqual(queued?.status, "error")
      assert.strictEqual(queued?.errorCode, "Withdrawn")
      // The phone recovers: the withdrawn push is still not sent to it.
      yield* setPushToken(flaky.id, `recovered-${flaky.id}`)
      yield* Effect.sleep(Duration.millis(700))
      assert.lengthOf(yield* deliveries(agent, flaky.id), 0)
    }))

  it.effect("withdraw: another account's, unknown and malformed ids", () =>
    Effect.gen(function*() {
      const owner = yield* makeAgent(["notifications:send"])
      yield* registerDevice(owner, "x-")
      const { notification } = yield* sentNotification(owner.client.notifications.create({ payload: { title: "t", body: "b" } }))
      const other = yield* makeAgent(["notifications:send"])
      assert.strictEqual((yield* Effect.flip(other.client.notifications.withdraw({ params: { id: notification.id } })))._tag, "NotFound")
      assert.strictEqual((yield* Effect.flip(owner.client.notifications.withdraw({ params: { id: "anot_unknown0000" } })))._tag, "NotFound")
      const malformed = yield* rawFetch("/api/agent/notifications/evt_123/withdraw", {
        method: "POST",
        headers: { authorization: `Bearer ${owner.secret}` }
      })
      assert.strictEqual(malformed.status, 400)
      // Still not withdrawn for its owner: the other account's attempt changed nothing.
      assert.isNull(yield* inboxReadAt(notification.id))
    }))

  it.effect("withdraw marks the inbox copy read and the detail withdrawn", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["notifications:send", "inbox:read"])
      yield* registerDevice(agent, "iphone-")
      const { notification } = yield* sentNotification(agent.client.notifications.create({ payload: { title: "t", body: "b" } }))
      yield* agent.client.notifications.withdraw({ params: { id: notification.id } })
      const detail = yield* agent.client.inbox.get({ params: { id: `notification:${notification.id}` } })
      assert.isNotNull(detail.readAt)
      assert.strictEqual(detail.status, "withdrawn")
    }))
})
