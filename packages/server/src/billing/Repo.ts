/** SQL of billing: what the account has used, counted where it lives. */
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"

export class BillingRepo extends Context.Service<BillingRepo, {
  /** Notifications the account sent since the start of this calendar month (UTC), and its active devices. */
  readonly usage: (userId: string) => Effect.Effect<{ readonly notifications: number; readonly devices: number }>
}>()("herald/BillingRepo") {
  static readonly layer = Layer.effect(BillingRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const usage = (userId: string) =>
      sql<{ notifications: number; devices: number }>`
        SELECT
          (SELECT count(*)::int FROM notifications
           WHERE user_id = ${userId} AND created_at >= date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC') AS notifications,
          (SELECT count(*)::int FROM devices WHERE user_id = ${userId} AND active) AS devices`.pipe(
        Effect.map((rows) => rows[0]!),
        Effect.orDie
      )
    return BillingRepo.of({ usage })
  }))
}
