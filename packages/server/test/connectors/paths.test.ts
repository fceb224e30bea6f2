/**
 * A `connector://{id}{path}` reply-webhook path cannot leave the route prefix
 * it is authorized under (issue 30): `.`/`..` segments (plain or
 * percent-encoded, any case, encoded twice), empty segments, backslashes,
 * encoded separators and control characters are refused when the URL is
 * saved (400 `VALIDATION_FAILED`, naming `body.url`) and again where the path
 * is matched against the routes — at delivery and when a gateway asks for
 * callback access — for a URL or a delivery recorded before the rule.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { createHash } from "node:crypto"
import { callbackSignature } from "../../src/connectors/Callbacks.ts"
import { makePerson, TestServerLayer } from "../../../../test/support/server.ts"
import { clientOf, connectorBody, raw, secretOf } from "./support.ts"

const escapes = [
  "/cb/../admin/delete-all",
  "/cb/%2e%2e/admin",
  "/cb/%2E%2e/admin",
  "/cb/.%2E/admin",
  "/cb/..%2fadmin",
  "/cb/..%2Fadmin",
  "/cb%2f..%2fadmin",
  "/cb/%252e%252e/admin",
  "/cb/%25252e%25252e/admin",
  "/cb/..",
  "/cb/./admin",
  "/cb/%2e/admin",
  "/cb\\..\\admin",
  "/cb/%5c..%5cadmin",
  "/cb/%5C..",
  "/cb//admin",
  "/cb/%00/admin",
  "/cb/%0d%0aX:1"
]

// Sound paths a route covers: dots inside a segment, a trailing slash, `..` in the query.
const sound = ["/cb/v1..2/x", "/cb/", "/cb/deploys?next=../admin", "/cb/%E2%9C%93", "/cb/a%20b"]

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("connector paths", (it) => {
  it.effect("a path with dot segments, empty segments or encoded separators is refused when saved (create and update)", () =>
    Effect.gen(function*() {
      const owner = yield* makePerson("conn-paths")
      const client = yield* clientOf(owner)
      const secret = yield* secretOf(owner)
      const { connector } = yield* client.connectors.create({
        payload: connectorBody({ routes: [{ pathPrefix: "/cb", upstream: "http://10.0.0.5:8080" }] })
      })
      const saved = yield* raw(secret, "POST", "/webhooks", { name: "ok", url: `connector://${connector.id}/cb/hooks` })
      assert.strictEqual(saved.status, 201)
      const webhookId = (saved.body as { webhook: { id: string } }).webhook.id
      for (const path of escapes) {
        const url = `connector://${connector.id}${path}`
        for (const [method, route] of [["POST", "/webhooks"], ["PATCH", `/webhooks/${webhookId}`]] as const) {
          const answer = yield* raw(secret, method, route, { name: "x", url })
          assert.strictEqual(answer.status, 400, `${method} ${url}`)
          assert.strictEqual(answer.code, "VALIDATION_FAILED", `${method} ${url}`)
          const issues = (answer.body as { issues: Array<{ path: string; message: string }> }).issues
          assert.strictEqual(issues[0]!.path, "body.url")
          assert.match(issues[0]!.message, /the path may not hold|percent-encoded more than/, url)
        }
      }
      for (const path of sound) {
        const answer = yield* raw(secret, "POST", "/webhooks", { name: "ok", url: `connector://${connector.id}${path}` })
        assert.strictEqual(answer.status, 201, path)
      }
      // The saved URL was never changed by the refused updates.
      const read = yield* raw(secret, "GET", `/webhooks/${webhookId}`)
      assert.strictEqual((read.body as { url: string }).url, `connector://${connector.id}/cb/hooks`)
    }))

  it.effect("a route's pathPrefix is held to the same rule (create and update)", () =>
    Effect.gen(function*() {
      const owner = yield* makePerson("conn-prefix")
      const secret = yield* secretOf(owner)
      const created = yield* raw(secret, "POST", "/connectors", connectorBody({ routes: [{ pathPrefix: "/cb/", upstream: "http://10.0.0.5:8080" }] }))
      assert.strictEqual(created.status, 201)
      const id = (created.body as { connector: { id: string } }).connector.id
      for (const prefix of ["/cb/..", "/cb/%2e%2e/admin", "/cb//x", "/cb\\x", "/cb%2fx"]) {
        const routes = [{ pathPrefix: prefix, upstream: "http://10.0.0.5:8080" }]
        for (const [method, route, body] of [["POST", "/connectors", connectorBody({ routes })], ["PATCH", `/connectors/${id}`, { routes }]] as const) {
          const answer = yield* raw(secret, method, route, body)
          assert.strictEqual(answer.status, 400, `${method} ${prefix}`)
          assert.strictEqual(answer.code, "VALIDATION_FAILED", `${method} ${prefix}`)
        }
      }
    }))

  it.effect("a URL saved before the rule is refused again at delivery, and a recorded path at callback access", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const owner = yield* makePerson("conn-paths-old")
      const client = yield* clientOf(owner)
      const created = yield* client.connectors.create({
        payload: connectorBody({ routes: [{ pathPrefix: "/cb", upstream: "http://10.0.0.5:8080" }] })
      })
      const { connector } = created
      const { webhook } = yield* client.webhooks.create({ payload: { name: "old", url: `connector://${connector.id}/cb/x` } })
      // As a URL saved before the rule would read.
      yield* sql`UPDATE reply_webhooks SET url = ${`connector://${connector.id}/cb/%2e%2e/admin/delete-all`} WHERE id = ${webhook.id}`
      const refused = yield* client.webhooks.test({ params: { id: webhook.id } })
      assert.strictEqual(refused.status, "failed")
      assert.match(refused.error ?? "", /^the connector path is refused: the path may not hold a \. or \.\. segment/)
      const recorded = yield* sql`SELECT 1 FROM connector_deliveries WHERE delivery_id = ${refused.id}`
      assert.strictEqual(recorded.length, 0)

      // A sound delivery whose recorded path is then rewritten, as one recorded before the rule would read.
      yield* sql`UPDATE reply_webhooks SET url = ${`connector://${connector.id}/cb/x`} WHERE id = ${webhook.id}`
      const delivery = yield* client.webhooks.test({ params: { id: webhook.id } })
      assert.strictEqual(delivery.status, "delivered")
      yield* sql`UPDATE connector_deliveries SET path = '/cb/../admin' WHERE delivery_id = ${delivery.id}`
      const rows = yield* sql<{ payload: string }>`SELECT payload FROM reply_webhook_deliveries WHERE id = ${delivery.id}`
      const bodySha256 = createHash("sha256").update(rows[0]!.payload, "utf8").digest("hex")
      const timestamp = Math.floor(Date.now() / 1000)
      const answer = yield* client.connectors.callbackAccess({
        params: { id: connector.id },
        payload: {
          deliveryId: delivery.id,
          timestamp,
          bodySha256,
          signature: callbackSignature(created.callbackSecret, delivery.id, timestamp, bodySha256)
        }
      }).pipe(Effect.flip)
      assert.strictEqual(answer._tag, "CallbackInvalid")
      assert.match(answer._tag === "CallbackInvalid" ? answer.error : "", /\. or \.\. segment/)
    }))
})
