/**
 * SQL of registered OAuth clients (dynamic client registration): insert, find
 * by id, the first approval, the count of clients waiting for one, and the
 * sweep of clients nobody approved — registration is unauthenticated, so
 * unclaimed rows must not pile up.
 */
import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { TokenEndpointAuthMethod } from "@herald/api"
import { countLocked, LockSpace } from "../db/AccountLocks.ts"

/** What registration writes: the client's metadata, its secret as a hash (or none for a public client). */
/** How a client was registered: by anyone, with the initial access token, or by the operator's command. */
export const RegisteredVia = Schema.Literals(["open", "token", "operator"])
export type RegisteredVia = typeof RegisteredVia.Type

export const NewClient = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  redirectUris: Schema.Array(Schema.String),
  tokenEndpointAuthMethod: TokenEndpointAuthMethod,
  secretHash: Schema.NullOr(Schema.String),
  clientUri: Schema.NullOr(Schema.String),
  scope: Schema.NullOr(Schema.String),
  registeredVia: RegisteredVia
})
export type NewClient = typeof NewClient.Type

export const ClientRow = Schema.Struct({
  ...NewClient.fields,
  createdAt: Schema.String,
  /** When a person first approved it (consent issued a code); null until then. */
  approvedAt: Schema.NullOr(Schema.String)
})
export type ClientRow = typeof ClientRow.Type

const Count = Schema.Struct({ count: Schema.Number })

export class ClientsRepo extends Context.Service<ClientsRepo, {
  readonly insert: (client: NewClient) => Effect.Effect<ClientRow>
  readonly find: (id: string) => Effect.Effect<Option.Option<ClientRow>>
  /** The names of those of `ids` that exist (an oauth token shows its client's). */
  readonly names: (ids: ReadonlyArray<string>) => Effect.Effect<ReadonlyMap<string, string>>
  /** Records the first approval; later ones keep the first time. */
  readonly markApproved: (id: string) => Effect.Effect<void>
  /** Runs `effect` in one transaction (the count and the insert of a registration). */
  readonly inTransaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** How many clients wait for a first approval (operator-registered ones aside), counted up to `upTo` under their lock. */
  readonly countUnapproved: (upTo: number) => Effect.Effect<number>
  /**
   * Deletes up to `limit` clients without a grant (operator-registered ones aside): those never approved
   * older than `unapprovedSeconds`, the others older than `unclaimedSeconds`; how many.
   */
  readonly deleteUnclaimed: (options: { readonly unapprovedSeconds: number; readonly unclaimedSeconds: number; readonly limit: number }) => Effect.Effect<number>
  /** Revokes the client's live grants (every node's revocation poll then evicts their tokens); how many. */
  readonly revokeGrants: (id: string) => Effect.Effect<number>
  /** Deletes a client (its grants and codes go with it); false when there is none. */
  readonly remove: (id: string) => Effect.Effect<boolean>
}>()("herald/ClientsRepo") {
  static readonly layer = Layer.effect(ClientsRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = sql`id, name, redirect_uris, token_endpoint_auth_method, secret_hash, client_uri, scope, registered_via,
                        created_at, approved_at`

    const insert = SqlSchema.findOne({
      Request: NewClient,
      Result: ClientRow,
      execute: (c) =>
        sql`INSERT INTO oauth_clients (id, name, redirect_uris, token_endpoint_auth_method, secret_hash, client_uri, scope, registered_via)
            VALUES (${c.id}, ${c.name}, ${c.redirectUris}::text[], ${c.tokenEndpointAuthMethod}, ${c.secretHash},
                    ${c.clientUri}, ${c.scope}, ${c.registeredVia})
            RETURNING ${columns}`
    })

    const find = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: ClientRow,
      execute: (id) => sql`SELECT ${columns} FROM oauth_clients WHERE id = ${id}`
    })

    const names = SqlSchema.findAll({
      Request: Schema.Array(Schema.String),
      Result: Schema.Struct({ id: Schema.String, name: Schema.String }),
      execute: (ids) => sql`SELECT id, name FROM oauth_clients WHERE id = ANY(${ids}::text[])`
    })

    const markApproved = SqlSchema.void({
      Request: Schema.String,
      execute: (id) => sql`UPDATE oauth_clients SET approved_at = now() WHERE id = ${id} AND approved_at IS NULL`
    })

    // Bounded by LIMIT over the partial index oauth_clients_unapproved_idx: the cost is that of the cap, not of the table.
    // Under the server's lock of registrations, so concurrent ones count one after another (the caller's transaction).
    const countUnapproved = (upTo: number) =>
      countLocked(sql, LockSpace.oauthClients, "unapproved", sql`SELECT count(*)::int AS n FROM (
        SELECT 1 FROM oauth_clients WHERE approved_at IS NULL AND registered_via <> 'operator' LIMIT ${upTo}) u`)

    // Operator-registered clients stay until the operator deletes them: registration may be closed, so nothing
    // would bring them back. A client that ever had a grant (an api_tokens row, revoked ones too) stays as before.
    const deleteUnclaimed = SqlSchema.findOne({
      Request: Schema.Struct({ unapprovedSeconds: Schema.Number, unclaimedSeconds: Schema.Number, limit: Schema.Number }),
      Result: Count,
      execute: ({ limit, unapprovedSeconds, unclaimedSeconds }) =>
        sql`WITH d AS (
              DELETE FROM oauth_clients WHERE id IN (
                SELECT c.id FROM oauth_clients c
                WHERE c.registered_via <> 'operator'
                  AND ((c.approved_at IS NULL AND c.created_at < now() - make_interval(secs => ${unapprovedSeconds}))
                       OR c.created_at < now() - make_interval(secs => ${unclaimedSeconds}))
                  AND NOT EXISTS (SELECT 1 FROM api_tokens t WHERE t.oauth_client_id = c.id)
                LIMIT ${limit})
              RETURNING 1)
            SELECT count(*)::int AS count FROM d`
    })

    const revokeGrants = SqlSchema.findAll({
      Request: Schema.String,
      Result: Schema.Struct({ one: Schema.Number }),
      execute: (id) =>
        sql`UPDATE api_tokens SET revoked_at = now() WHERE oauth_client_id = ${id} AND revoked_at IS NULL RETURNING 1 AS one`
    })

    const remove = SqlSchema.findAll({
      Request: Schema.String,
      Result: Schema.Struct({ one: Schema.Number }),
      execute: (id) => sql`DELETE FROM oauth_clients WHERE id = ${id} RETURNING 1 AS one`
    })

    return ClientsRepo.of({
      insert: (client) => insert(client).pipe(Effect.orDie),
      find: (id) => find(id).pipe(Effect.orDie),
      names: (ids) =>
        ids.length === 0
          ? Effect.succeed(new Map())
          : names(ids).pipe(Effect.map((rows) => new Map(rows.map((r) => [r.id, r.name]))), Effect.orDie),
      markApproved: (id) => markApproved(id).pipe(Effect.orDie),
      inTransaction: (effect) => sql.withTransaction(effect).pipe(Effect.catchTag("SqlError", Effect.die)),
      countUnapproved,
      deleteUnclaimed: (options) => deleteUnclaimed(options).pipe(Effect.map((r) => r.count), Effect.orDie),
      revokeGrants: (id) => revokeGrants(id).pipe(Effect.map((rows) => rows.length), Effect.orDie),
      remove: (id) => remove(id).pipe(Effect.map((rows) => rows.length > 0), Effect.orDie)
    })
  }))
}
