/**
 * SQL of registered OAuth clients (dynamic client registration): insert, find
 * by id, and the sweep of clients nobody approved — registration is
 * unauthenticated, so unclaimed rows must not pile up.
 */
import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { TokenEndpointAuthMethod } from "@herald/api"

/** What registration writes: the client's metadata, its secret as a hash (or none for a public client). */
export const NewClient = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  redirectUris: Schema.Array(Schema.String),
  tokenEndpointAuthMethod: TokenEndpointAuthMethod,
  secretHash: Schema.NullOr(Schema.String),
  clientUri: Schema.NullOr(Schema.String),
  scope: Schema.NullOr(Schema.String)
})
export type NewClient = typeof NewClient.Type

export const ClientRow = Schema.Struct({ ...NewClient.fields, createdAt: Schema.String })
export type ClientRow = typeof ClientRow.Type

const Count = Schema.Struct({ count: Schema.Number })

export class ClientsRepo extends Context.Service<ClientsRepo, {
  readonly insert: (client: NewClient) => Effect.Effect<ClientRow>
  readonly find: (id: string) => Effect.Effect<Option.Option<ClientRow>>
  /** Deletes up to `limit` clients older than `olderThanSeconds` that no grant was ever issued to; how many. */
  readonly deleteUnclaimed: (olderThanSeconds: number, limit: number) => Effect.Effect<number>
}>()("herald/oauth/ClientsRepo") {
  static readonly layer = Layer.effect(ClientsRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = sql`id, name, redirect_uris, token_endpoint_auth_method, secret_hash, client_uri, scope, created_at`

    const insert = SqlSchema.findOne({
      Request: NewClient,
      Result: ClientRow,
      execute: (c) =>
        sql`INSERT INTO oauth_clients (id, name, redirect_uris, token_endpoint_auth_method, secret_hash, client_uri, scope)
            VALUES (${c.id}, ${c.name}, ${c.redirectUris}::text[], ${c.tokenEndpointAuthMethod}, ${c.secretHash},
                    ${c.clientUri}, ${c.scope})
            RETURNING ${columns}`
    })

    const find = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: ClientRow,
      execute: (id) => sql`SELECT ${columns} FROM oauth_clients WHERE id = ${id}`
    })

    const deleteUnclaimed = SqlSchema.findOne({
      Request: Schema.Struct({ olderThanSeconds: Schema.Number, limit: Schema.Number }),
      Result: Count,
      execute: ({ limit, olderThanSeconds }) =>
        sql`WITH d AS (
              DELETE FROM oauth_clients WHERE id IN (
                SELECT c.id FROM oauth_clients c
                WHERE c.created_at < now() - make_interval(secs => ${olderThanSeconds})
                  AND NOT EXISTS (SELECT 1 FROM api_tokens t WHERE t.oauth_client_id = c.id)
                LIMIT ${limit})
              RETURNING 1)
            SELECT count(*)::int AS count FROM d`
    })

    return ClientsRepo.of({
      insert: (client) => insert(client).pipe(Effect.orDie),
      find: (id) => find(id).pipe(Effect.orDie),
      deleteUnclaimed: (olderThanSeconds, limit) =>
        deleteUnclaimed({ olderThanSeconds, limit }).pipe(Effect.map((r) => r.count), Effect.orDie)
    })
  }))
}
