/** SQL of billing: what the account has used, counted where it lives. */
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"

const Usage = Schema.Struct({ notifications: Schema.Number, devices: Schema.Number })

export class BillingRepo extends Context.Service<BillingRepo, {
  /** Notifications the account sent since the start of this calendar month (UTC), and its active devices. */
  readonly usage: (userId: string) => Effect.Effect<typeof Usage.Type>
}>()("herald/BillingRepo") {
  static readonly layer = Layer.effect(BillingRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const usage = SqlSchema.findOne({
      Request: Schema.String,
      Result: Usage,
      execute: (userId) => sql`
        SELECT
          (SELECT count(*)::int FROM notifications
           WHERE user_id = ${userId} AND created_at >= date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC') AS notifications,
          (SELECT count(*)::int FROM devices WHERE user_id = ${userId} AND active) AS devices`
    })
    return BillingRepo.of({ usage: (userId) => usage(userId).pipe(Effect.orDie) })
  }))
}
