/**
 * SQL of the deliveries a connector's gateway has yet to collect: recorded for
 * one of the owner's connectors (connectors/Targets.ts) and not used by a
 * `callback-access`, with the reply webhook's headers and signing secret.
 */
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"

export const PendingDeliveryRow = Schema.Struct({
  deliveryId: Schema.String,
  path: Schema.String,
  body: Schema.String,
  bodySha256: Schema.String,
  recordedAt: Schema.String,
  /** Null when the reply webhook has been deleted since. */
  headers: Schema.NullOr(Schema.Array(Schema.Struct({ name: Schema.String, value: Schema.String }))),
  signingSecret: Schema.NullOr(Schema.String)
})
export type PendingDeliveryRow = typeof PendingDeliveryRow.Type

export class PendingDeliveriesRepo extends Context.Service<PendingDeliveriesRepo, {
  /** Whether the owner has this connector. */
  readonly owns: (userId: string, connectorId: string) => Effect.Effect<boolean>
  /** The connector's unused deliveries, oldest first. */
  readonly pending: (connectorId: string, limit: number) => Effect.Effect<ReadonlyArray<PendingDeliveryRow>>
}>()("herald/PendingDeliveriesRepo") {
  static readonly layer = Layer.effect(PendingDeliveriesRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const owns = SqlSchema.findAll({
      Request: Schema.Struct({ userId: Schema.String, connectorId: Schema.String }),
      Result: Schema.Struct({ id: Schema.String }),
      execute: ({ connectorId, userId }) => sql`SELECT id FROM connectors WHERE id = ${connectorId} AND user_id = ${userId}`
    })
    const pending = SqlSchema.findAll({
      Request: Schema.Struct({ connectorId: Schema.String, limit: Schema.Int }),
      Result: PendingDeliveryRow,
      execute: ({ connectorId, limit }) =>
        sql`SELECT c.delivery_id, c.path, d.payload AS body, c.body_sha256,
                   to_char(c.recorded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS recorded_at,
                   w.headers, w.signing_secret
            FROM connector_deliveries c
            JOIN reply_webhook_deliveries d ON d.id = c.delivery_id
            LEFT JOIN reply_webhooks w ON w.id = d.webhook_id
            WHERE c.connector_id = ${connectorId} AND c.used_at IS NULL
            ORDER BY c.recorded_at, c.delivery_id
            LIMIT ${limit}`
    })
    return PendingDeliveriesRepo.of({
      owns: (userId, connectorId) => owns({ userId, connectorId }).pipe(Effect.map((rows) => rows.length > 0), Effect.orDie),
      pending: (connectorId, limit) => Effect.orDie(pending({ connectorId, limit }))
    })
  }))
}
