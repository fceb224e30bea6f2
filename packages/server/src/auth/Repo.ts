/**
 * SQL of the credential cache beyond the identity repo: the database's clock,
 * so the revocation poll's watermark starts from the time the rows are stamped
 * with, whatever this process's clock says.
 */
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"

export class CredentialsRepo extends Context.Service<CredentialsRepo, {
  /** `now()` of the database, as an ISO 8601 string. */
  readonly databaseNow: Effect.Effect<string>
}>()("herald/CredentialsRepo") {
  static readonly layer = Layer.effect(CredentialsRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const now = SqlSchema.findOne({
      Request: Schema.Void,
      Result: Schema.Struct({ now: Schema.String }),
      execute: () => sql`SELECT now() AS now`
    })
    return CredentialsRepo.of({ databaseNow: Effect.map(now(undefined), (row) => row.now).pipe(Effect.orDie) })
  }))
}
