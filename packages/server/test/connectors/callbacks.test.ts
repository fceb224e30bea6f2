/**
 * Connector callbacks: a reply webhook may target `connector://{id}{path}` of
 * the account's own connector; its delivery is recorded for the connector
 * (nothing is sent) and `callback-access` authorizes it once with a valid
 * signature and a timestamp within 5 minutes, answering the saved path.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { createHash } from "node:crypto"
import { callbackSignature } from "../../src/connectors/Callbacks.ts"
import { makePerson, TestServerLayer } from "../../../../test/support/server.ts"
import { clientOf, connectorBody, outcome } from "./support.ts"

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest("hex")

/** A connector, a reply webhook targeting one of its routes, and one recorded delivery with its body digest. */
const recordedDelivery = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const owner = yield* makePerson("conn-owner")
  const client = yield* clientOf(owner)
  const created = yield* client.connectors.create({ payload: connectorBody() })
  const url = `connector://${created.connector.id}/hooks/deploys?team=a`
  const { webhook } = yield* client.webhooks.create({ payload: { name: "Via gateway", url } })
  const delivery = yield* client.webhooks.test({ params: { id: webhook.id } })
  const rows = yield* sql<{ payload: string }>`SELECT payload FROM reply_webhook_deliveries WHERE id = ${delivery.id}`
  return { owner, client, ...created, webhook, delivery, bodySha256: sha256(rows[0]!.payload) }
})

const nowSeconds = () => Math.floor(Date.now() / 1000)

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("connector callbacks", (it) => {
  it.effect("a delivery to a connector route is recorded, then authorized once with its path", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const { bodySha256, callbackSecret, client, connector, delivery } = yield* recordedDelivery
      assert.strictEqual(delivery.status, "delivered")
      assert.isNull(delivery.responseCode)
      const recorded = yield* sql<{ connectorId: string; path: string }>`
        SELECT connector_id, path FROM connector_deliveries WHERE delivery_id = ${delivery.id}`
      assert.deepStrictEqual(recorded.map((r) => [r.connectorId, r.path]), [[connector.id, "/hooks/deploys?team=a"]])

      const timestamp = nowSeconds()
      const payload = {
        deliveryId: delivery.id,
        timestamp,
        bodySha256,
        signature: callbackSignature(callbackSecret, delivery.id, timestamp, bodySha256)
      }
      const granted = yield* client.connectors.callbackAccess({ params: { id: connector.id }, payload })
      assert.deepStrictEqual({ ...granted }, { path: "/hooks/deploys?team=a" })
      // Replay: the same delivery id again, even freshly signed.
      const replay = yield* client.connectors.callbackAccess({ params: { id: connector.id }, payload }).pipe(Effect.flip)
      assert.strictEqual(replay._tag, "CallbackInvalid")
      const later = nowSeconds()
      const resigned = { ...payload, timestamp: later, signature: callbackSignature(callbackSecret, delivery.id, later, bodySha256) }
      assert.strictEqual(yield* outcome(client.connectors.callbackAccess({ params: { id: connector.id }, payload: resigned })), "CallbackInvalid")
    }))

  it.effect("a bad signature, a stale or future timestamp, another body or an unknown delivery are refused", () =>
    Effect.gen(function*() {
      const { bodySha256, callbackSecret, client, connector, delivery } = yield* recordedDelivery
      const id = connector.id
      const signed = (over: { deliveryId?: string; timestamp?: number; bodySha256?: string; secret?: string }) => {
        const deliveryId = over.deliveryId ?? delivery.id
        const timestamp = over.timestamp ?? nowSeconds()
        const digest = over.bodySha256 ?? bodySha256
        return { deliveryId, timestamp, bodySha256: digest, signature: callbackSignature(over.secret ?? callbackSecret, deliveryId, timestamp, digest) }
      }
      const refusedCases = [
        { ...signed({}), signature: signed({ secret: "hcb_wrong" }).signature },
        { ...signed({}), signature: "AAAA" },
        signed({ timestamp: nowSeconds() - 301 }),
        // 302: the server reads its clock after this one, possibly in the next second (+301 would then read +300).
        signed({ timestamp: nowSeconds() + 302 }),
        signed({ bodySha256: sha256("another body") }),
        signed({ deliveryId: "whd_unknown" })
      ]
      for (const payload of refusedCases) {
        assert.strictEqual(yield* outcome(client.connectors.callbackAccess({ params: { id }, payload })), "CallbackInvalid", JSON.stringify(payload))
      }
      // Inside the window (4 minutes off), and none of the refusals spent the delivery.
      const granted = yield* client.connectors.callbackAccess({ params: { id }, payload: signed({ timestamp: nowSeconds() - 240 }) })
      assert.strictEqual(granted.path, "/hooks/deploys?team=a")
    }))

  it.effect("after rotate-secret only the new secret signs", () =>
    Effect.gen(function*() {
      const { bodySha256, callbackSecret, client, connector, delivery } = yield* recordedDelivery
      const rotated = yield* client.connectors.rotateSecret({ params: { id: connector.id } })
      const timestamp = nowSeconds()
      const withSecret = (secret: string) => ({
        deliveryId: delivery.id,
        timestamp,
        bodySha256,
        signature: callbackSignature(secret, delivery.id, timestamp, bodySha256)
      })
      assert.strictEqual(
        yield* outcome(client.connectors.callbackAccess({ params: { id: connector.id }, payload: withSecret(callbackSecret) })),
        "CallbackInvalid"
      )
      const granted = yield* client.connectors.callbackAccess({ params: { id: connector.id }, payload: withSecret(rotated.callbackSecret) })
      assert.strictEqual(granted.path, "/hooks/deploys?team=a")
    }))

  it.effect("a connector URL must name the account's own connector and a path its routes cover", () =>
    Effect.gen(function*() {
      const mine = yield* clientOf(yield* makePerson("conn-owner"))
      const theirs = yield* clientOf(yield* makePerson("conn-other"))
      const { connector } = yield* mine.connectors.create({ payload: connectorBody() })
      const other = (yield* theirs.connectors.create({ payload: connectorBody() })).connector
      const refused = [
        `connector://${other.id}/hooks/x`,
        "connector://conn_nosuchconnector/hooks/x",
        `connector://${connector.id}/elsewhere`,
        `connector://${connector.id}`,
        "connector://not-an-id/hooks"
      ]
      for (const url of refused) {
        assert.strictEqual(yield* outcome(mine.webhooks.create({ payload: { name: "x", url } })), "WebhookTargetRefused", url)
      }
      const { webhook } = yield* mine.webhooks.create({ payload: { name: "ok", url: `connector://${connector.id}/grafana/alerts` } })
      assert.strictEqual(
        yield* outcome(mine.webhooks.update({ params: { id: webhook.id }, payload: { url: `connector://${other.id}/hooks` } })),
        "WebhookTargetRefused"
      )
      // A delivery to a connector removed since is failed, not sent anywhere.
      yield* mine.connectors.remove({ params: { id: connector.id } })
      const failed = yield* mine.webhooks.test({ params: { id: webhook.id } })
      assert.strictEqual(failed.status, "failed")
      assert.strictEqual(failed.error, "the connector no longer exists")
    }))
})
