/**
 * A gateway reads its connector's pending deliveries: the exact body, its
 * digest, the path and the headers a reply webhook sends. The test verifies
 * them as a gateway and its upstream would — the digest of the body, the
 * Standard Webhooks signature under the reply webhook's secret — then
 * authorizes the delivery, after which it is no longer pending.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { createHash, createHmac } from "node:crypto"
import { callbackSignature } from "../../src/connectors/Callbacks.ts"
import { makePerson, TestServerLayer } from "../../../../test/support/server.ts"
import { clientOf, connectorBody, outcome, raw, secretOf } from "./support.ts"

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex")

/** What an upstream does with a reply webhook's headers (Standard Webhooks, `whsec_` + base64 key). */
const verifies = (signingSecret: string, headers: Record<string, string>, body: string) => {
  const key = Buffer.from(signingSecret.replace(/^whsec_/, ""), "base64")
  const expected = createHmac("sha256", key).update(`${headers["webhook-id"]}.${headers["webhook-timestamp"]}.${body}`).digest("base64")
  return headers["webhook-signature"]?.split(" ").includes(`v1,${expected}`) === true
}

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("connector pending deliveries", (it) => {
  it.effect("a gateway reads a pending delivery, verifies it, authorizes it, and it is gone", () =>
    Effect.gen(function*() {
      const owner = yield* makePerson("gateway-owner")
      const client = yield* clientOf(owner)
      const { callbackSecret, connector } = yield* client.connectors.create({ payload: connectorBody() })
      const url = `connector://${connector.id}/hooks/deploys?team=a`
      const created = yield* client.webhooks.create({
        payload: { name: "Via gateway", url, headers: [{ name: "X-Team", value: "a" }] }
      })
      const delivery = yield* client.webhooks.test({ params: { id: created.webhook.id } })
      const second = yield* client.webhooks.test({ params: { id: created.webhook.id } })

      const { items } = yield* client.connectors.deliveries({ params: { id: connector.id } })
      assert.deepStrictEqual(items.map((d) => d.deliveryId), [delivery.id, second.id])
      const first = items[0]!
      assert.strictEqual(first.path, "/hooks/deploys?team=a")
      assert.strictEqual(sha256(first.body), first.bodySha256)
      assert.strictEqual(JSON.parse(first.body).type, "interaction.answered")
      assert.strictEqual(first.headers["content-type"], "application/json")
      assert.strictEqual(first.headers["x-team"], "a")
      assert.strictEqual(first.headers["webhook-id"], delivery.id)
      assert.isTrue(verifies(created.signingSecret, first.headers, first.body))
      assert.isFalse(verifies(created.signingSecret, first.headers, first.body + " "))

      const limited = yield* client.connectors.deliveries({ params: { id: connector.id }, query: { limit: 1 } })
      assert.deepStrictEqual(limited.items.map((d) => d.deliveryId), [delivery.id])

      const timestamp = Math.floor(Date.now() / 1000)
      const granted = yield* client.connectors.callbackAccess({
        params: { id: connector.id },
        payload: {
          deliveryId: first.deliveryId,
          timestamp,
          bodySha256: first.bodySha256,
          signature: callbackSignature(callbackSecret, first.deliveryId, timestamp, first.bodySha256)
        }
      })
      assert.strictEqual(granted.path, first.path)
      const after = yield* client.connectors.deliveries({ params: { id: connector.id } })
      assert.deepStrictEqual(after.items.map((d) => d.deliveryId), [second.id])

      // Without its reply webhook a delivery still reaches the gateway, unsigned.
      yield* client.webhooks.remove({ params: { id: created.webhook.id } })
      const orphaned = yield* client.connectors.deliveries({ params: { id: connector.id } })
      assert.deepStrictEqual(orphaned.items.map((d) => d.deliveryId), [second.id])
      assert.isUndefined(orphaned.items[0]!.headers["webhook-signature"])
    }))

  it.effect("another account's connector answers 404; a limit out of range answers 400", () =>
    Effect.gen(function*() {
      const owner = yield* makePerson("gateway-owner-2")
      const stranger = yield* makePerson("gateway-stranger")
      const { connector } = yield* (yield* clientOf(owner)).connectors.create({ payload: connectorBody() })
      const strangerClient = yield* clientOf(stranger)
      assert.strictEqual(yield* outcome(strangerClient.connectors.deliveries({ params: { id: connector.id } })), "NotFound")
      const secret = yield* secretOf(owner)
      for (const limit of ["0", "101", "x"]) {
        const answer = yield* raw(secret, "GET", `/connectors/${connector.id}/deliveries?limit=${limit}`)
        assert.strictEqual(answer.status, 400, limit)
      }
      assert.strictEqual((yield* raw(secret, "GET", `/connectors/${connector.id}/deliveries`)).status, 200)
    }))
})
