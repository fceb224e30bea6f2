/**
 * Reply webhooks that target a connector route (decisions.md:
 * `url: "connector://{connectorId}{path}"`). Such a URL is accepted for a
 * connector the account owns whose routes cover the path; each delivery to it
 * is recorded for the connector with its path and body digest instead of being
 * sent (the gateway fetches it through `callback-access`).
 */
import { ConnectorRoute, connectorPathProblem } from "@herald/api"
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { createHash } from "node:crypto"

/** Why a delivery could not be recorded when its connector is gone (the attempt's `error`). */
const gone = "the connector no longer exists"

const CONNECTOR_URL = /^connector:\/\/(conn_[0-9A-Za-z]{1,64})(\/[\x21-\x7e]*)$/u

/** The connector and path of a `connector://` URL; undefined for any other URL. */
export const connectorTarget = (url: string): { readonly connectorId: string; readonly path: string } | undefined => {
  if (!url.startsWith("connector:")) return undefined
  const m = CONNECTOR_URL.exec(url)
  return m === null ? { connectorId: "", path: "" } : { connectorId: m[1]!, path: m[2]! }
}

/**
 * Why no route covers the path, or undefined when one does. The path's own
 * spelling is judged first (a `..` or `%2e%2e` segment, `//`, a backslash, `%2f`):
 * the request schema refuses those already, and this match refuses them again
 * so a URL saved before that rule, or reaching here another way, cannot
 * escape its prefix (`/cb/../admin` starts with `/cb`).
 */
export const uncoveredPath = (routes: ReadonlyArray<ConnectorRoute>, path: string): string | undefined => {
  const problem = connectorPathProblem(path)
  if (problem !== undefined) return problem
  return routes.some((route) => path.startsWith(route.pathPrefix)) ? undefined : "no route of the connector covers the path"
}

export class ConnectorTargets extends Context.Service<ConnectorTargets, {
  /** Why the account may not target this `connector://` URL; undefined when it may. */
  readonly refuse: (userId: string, url: string) => Effect.Effect<string | undefined>
  /**
   * Records a delivery for its connector (once, and only the account's own);
   * why it cannot (the connector is gone, or its routes no longer cover the path), or undefined once recorded.
   */
  readonly record: (deliveryId: string, url: string, body: string) => Effect.Effect<string | undefined>
}>()("herald/ConnectorTargets") {
  static readonly layer = Layer.effect(ConnectorTargets, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const routesOf = SqlSchema.findAll({
      Request: Schema.Struct({ connectorId: Schema.String, userId: Schema.String }),
      Result: Schema.Struct({ routes: Schema.Array(ConnectorRoute) }),
      execute: ({ connectorId, userId }) => sql`SELECT routes FROM connectors WHERE id = ${connectorId} AND user_id = ${userId}`
    })
    // The recording itself is scoped to the delivery's account (the insert's join).
    const routesByConnector = SqlSchema.findAll({
      Request: Schema.String,
      Result: Schema.Struct({ routes: Schema.Array(ConnectorRoute) }),
      execute: (connectorId) => sql`SELECT routes FROM connectors WHERE id = ${connectorId}`
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
          return uncoveredPath(rows[0]!.routes, target.path)
        }).pipe(Effect.orDie),
      record: (deliveryId, url, body) =>
        Effect.gen(function*() {
          const target = connectorTarget(url)!
          // Judged again at delivery: the routes may have changed since the URL was saved.
          const routes = yield* routesByConnector(target.connectorId)
          if (routes.length === 0) return gone
          const uncovered = uncoveredPath(routes[0]!.routes, target.path)
          if (uncovered !== undefined) return `the connector path is refused: ${uncovered}`
          const digest = createHash("sha256").update(body, "utf8").digest("hex")
          const rows = yield* insert({ deliveryId, connectorId: target.connectorId, path: target.path, digest })
          return rows.length > 0 ? undefined : gone
        }).pipe(Effect.orDie)
    })
  }))
}
