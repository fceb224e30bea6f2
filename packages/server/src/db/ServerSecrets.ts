/**
 * Keys the server keeps in its database (`server_secrets`), such as the ones
 * that sign inbox and audit cursors: every node of a deployment must sign and
 * check with the same key, so the first node to ask stores one and every later
 * ask reads that one.
 */
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { randomBytes } from "node:crypto"

export class ServerSecrets extends Context.Service<ServerSecrets, {
  /** The 32-byte key stored under `name` (hex), made and stored by the first caller. */
  readonly key: (name: string) => Effect.Effect<string>
}>()("herald/ServerSecrets") {
  static readonly layer = Layer.effect(ServerSecrets, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const secret = SqlSchema.findOne({
      Request: Schema.Struct({ name: Schema.String, fresh: Schema.String }),
      Result: Schema.Struct({ secret: Schema.String }),
      execute: ({ fresh, name }) =>
        sql`INSERT INTO server_secrets (name, secret) VALUES (${name}, ${fresh}) ON CONFLICT (name) DO NOTHING`.pipe(
          Effect.andThen(sql`SELECT secret FROM server_secrets WHERE name = ${name}`)
        )
    })
    return ServerSecrets.of({
      key: (name) =>
        secret({ name, fresh: randomBytes(32).toString("hex") }).pipe(Effect.map((row) => row.secret), Effect.orDie)
    })
  }))
}
