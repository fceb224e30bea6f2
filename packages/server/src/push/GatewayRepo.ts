/** SQL of the push gateway: a device whose push token a provider declared dead stops receiving pushes. */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import type { SqlError } from "effect/sql"

export class GatewayRepo extends Context.Service<GatewayRepo, {
  /** Marks the device inactive if it still has this token (a device re-registered with a new one meanwhile is spared). */
  readonly deactivate: (deviceId: string, token: string) => Effect.Effect<void, SqlError.SqlError>
}>()("herald/GatewayRepo") {
  static readonly layer = Layer.effect(GatewayRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return GatewayRepo.of({
      deactivate: (deviceId, token) =>
        sql`UPDATE devices SET active = false, updated_at = now()
            WHERE id = ${deviceId} AND push_token = ${token} AND active`.pipe(Effect.asVoid)
    })
  }))
}
