/**
 * Reply webhooks that target a connector route (decisions.md:
 * `url: "connector://{connectorId}{path}"`). Such a URL is accepted for a
 * connector the account owns whose routes cover the path; each delivery to it
 * is recorded for the connector with its path and body digest instead of being
 * sent (the gateway fetches it through `callback-access`).
 */
import { ConnectorRoute } from "@herald/api"
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { createHash } from "node:crypto"

const CONNECTOR_URL = /^connector:\/\/(conn_[0-9A-Za-z]{1,64})(\/[\x21-\x7e]*)$/u

/** The connector and path of a `connector://` URL; undefined for any other URL. */
export const connectorTarget = (url: string): { readonly connectorId: string; readonly path: string } | undefined => {
  if (!url.startsWith("connector:")) return undefined
  const m = CONNECTOR_URL.exec(url)
  return m === null ? { connectorId: "", path: "" } : { connectorId: m[1]!, path: m[2]! }
}

export class ConnectorTargets extends Context.Service<ConnectorTargets, {
  /** Why the account may not target this `connector://` URL; undefined when it may. */
  readonly refuse: (userId: string, url: string) => Effect.Effect<string | undefined>
  /** Records a delivery for its connector (once, and only the account's own); false when the connector is gone. */
  readonly record: (deliveryId: string, url: string, body: string) => Effect.Effect<boolean>
}>()("herald/connectors/ConnectorTargets") {
  static readonly layer = Layer.effect(ConnectorTargets, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const routesOf = SqlSchema.findAll({
      Request: Schema.Struct({ connectorId: Schema.String, userId: Schema.String }),
      Result: Schema.Struct({ routes: Schema.Array(ConnectorRoute) }),
      execute: ({ connectorId, userId }) => sql`SELECT routes FROM connectors WHERE id = ${connectorId} AND user_id = ${userId}`
    })
    const insert = SqlSchema.findAll({
      Request: Schema.Struct({ deliveryId: Schema.String, connectorId: Schema.String, path: Schema.String, digest: Schema.String }),
      Result: Schema.Struct({ recorded: Schema.Boolean }),
      execute: ({ connectorId, deliveryId, digest, path }) =>
        sql`INSERT INTO connector_deliveries (delivery_id, connector_id, path, body_sha256)
            SELECT d.id, c.id, ${path}, ${digest}
            FROM connectors c JOIN reply_webhook_deliveries d ON d.id = ${deliveryId} AND d.user_id = c.user_id
            WHERE c.id = ${connectorId}
            ON CONFLICT (delivery_id) DO NOTHING`.pipe(
          Effect.andThen(sql`SELECT true AS recorded FROM connector_deliveries WHERE delivery_id = ${deliveryId}`)
        )
    })
    return ConnectorTargets.of({
      refuse: (userId, url) =>
        Effect.gen(function*() {
          const target = connectorTarget(url)!
          if (target.connectorId === "") return "a connector URL is connector://{connectorId}{path}, the path starting with /"
          const rows = yield* routesOf({ connectorId: target.connectorId, userId })
          if (rows.length === 0) return "no such connector"
          return rows[0]!.routes.some((route) => target.path.startsWith(route.pathPrefix))
            ? undefined
            : "no route of the connector covers the path"
        }).pipe(Effect.orDie),
      record: (deliveryId, url, body) => {
        const target = connectorTarget(url)!
        const digest = createHash("sha256").update(body, "utf8").digest("hex")
        return insert({ deliveryId, connectorId: target.connectorId, path: target.path, digest }).pipe(
          Effect.map((rows) => rows.length > 0),
          Effect.orDie
        )
      }
    })
  }))
}
