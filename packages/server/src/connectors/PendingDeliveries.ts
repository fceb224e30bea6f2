/**
 * What a connector's gateway reads before it forwards a callback: each
 * pending delivery's exact body, its digest (the `bodySha256` it signs for
 * `callback-access`), its path, and the headers a reply webhook sends, signed
 * with the reply webhook's secret at the read so the upstream verifies the
 * delivery as it would any other (docs/connectors.md has the recipe).
 */
import { ConnectorDelivery, ConnectorDeliveryList, NotFound } from "@herald/api"
import { Clock, Context, Effect, Layer } from "effect"
import { signatureHeaders } from "../webhooks/Signing.ts"
import { PendingDeliveriesRepo } from "./PendingDeliveriesRepo.ts"
import type { PendingDeliveryRow } from "./PendingDeliveriesRepo.ts"

const DEFAULT_LIMIT = 50

const headersOf = (row: PendingDeliveryRow, timestampSeconds: number): Record<string, string> => {
  const headers: Record<string, string> = { "content-type": "application/json" }
  for (const h of row.headers ?? []) headers[h.name.toLowerCase()] = h.value
  if (row.signingSecret === null) return headers
  return { ...headers, ...signatureHeaders({ secret: row.signingSecret, id: row.deliveryId, timestampSeconds, body: row.body }) }
}

export class PendingDeliveries extends Context.Service<PendingDeliveries, {
  readonly list: (userId: string, connectorId: string, limit: number | undefined) => Effect.Effect<ConnectorDeliveryList, NotFound>
}>()("herald/PendingDeliveries") {
  static readonly layerNoDeps = Layer.effect(PendingDeliveries, Effect.gen(function*() {
    const repo = yield* PendingDeliveriesRepo
    const list = Effect.fn("PendingDeliveries.list")(function*(userId: string, connectorId: string, limit: number | undefined) {
      if (!(yield* repo.owns(userId, connectorId))) return yield* new NotFound({ error: "Connector not found." })
      const rows = yield* repo.pending(connectorId, limit ?? DEFAULT_LIMIT)
      const timestampSeconds = Math.floor((yield* Clock.currentTimeMillis) / 1000)
      return new ConnectorDeliveryList({
        items: rows.map((row) =>
          new ConnectorDelivery({
            deliveryId: row.deliveryId,
            path: row.path,
            body: row.body,
            bodySha256: row.bodySha256,
            headers: headersOf(row, timestampSeconds),
            recordedAt: row.recordedAt
          })
        )
      })
    })
    return PendingDeliveries.of({ list })
  }))

  static readonly layer = PendingDeliveries.layerNoDeps.pipe(Layer.provide(PendingDeliveriesRepo.layer))
}
