/**
 * Reply webhooks that target a connector route (decisions.md:
 * `url: "connector://{connectorId}{path}"`). Such a URL is accepted for a
 * connector the account owns whose routes cover the path; each delivery to it
 * is recorded for the connector with its path and body digest instead of being
 * sent (the gateway fetches it through `callback-access`).
 */
import { ConnectorRoute } from "@herald/api"
import { Effect, Schema } from "effect"
import type { SqlClient } from "effect/sql"
import { createHash } from "node:crypto"

const CONNECTOR_URL = /^connector:\/\/(conn_[0-9A-Za-z]{1,64})(\/[\x21-\x7e]*)$/u

/** The connector and path of a `connector://` URL; undefined for any other URL. */
export const connectorTarget = (url: string): { readonly connectorId: string; readonly path: string } | undefined => {
  if (!url.startsWith("connector:")) return undefined
  const m = CONNECTOR_URL.exec(url)
  return m === null ? { connectorId: "", path: "" } : { connectorId: m[1]!, path: m[2]! }
}

const Routes = Schema.Array(ConnectorRoute)

/** Why the account may not target this connector URL; undefined when it may. */
export const refuseConnectorTarget = (sql: SqlClient.SqlClient, userId: string, url: string) =>
  Effect.gen(function*() {
    const target = connectorTarget(url)!
    if (target.connectorId === "") return "a connector URL is connector://{connectorId}{path}, the path starting with /"
    const rows = yield* sql<{ routes: unknown }>`SELECT routes FROM connectors WHERE id = ${target.connectorId} AND user_id = ${userId}`
    if (rows.length === 0) return "no such connector"
    const routes = yield* Schema.decodeUnknownEffect(Routes)(rows[0]!.routes)
    return routes.some((route) => target.path.startsWith(route.pathPrefix)) ? undefined : "no route of the connector covers the path"
  }).pipe(Effect.orDie)

/** Records a delivery for its connector (once, and only the account's own); false when the connector is gone. */
export const recordConnectorDelivery = (sql: SqlClient.SqlClient, deliveryId: string, url: string, body: string) =>
  Effect.gen(function*() {
    const target = connectorTarget(url)!
    const digest = createHash("sha256").update(body, "utf8").digest("hex")
    yield* sql`INSERT INTO connector_deliveries (delivery_id, connector_id, path, body_sha256)
      SELECT d.id, c.id, ${target.path}, ${digest}
      FROM connectors c JOIN reply_webhook_deliveries d ON d.id = ${deliveryId} AND d.user_id = c.user_id
      WHERE c.id = ${target.connectorId}
      ON CONFLICT (delivery_id) DO NOTHING`
    const rows = yield* sql`SELECT 1 FROM connector_deliveries WHERE delivery_id = ${deliveryId}`
    return rows.length > 0
  }).pipe(Effect.orDie)
