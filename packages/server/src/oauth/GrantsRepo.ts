/**
 * SQL of OAuth grants: authorization codes, the grant's row in `api_tokens`
 * (kind `oauth`, the ApiToken `GET /tokens` lists), its access tokens and its
 * rotating refresh tokens, all found by the SHA-256 hash of their secret.
 * Expiry and use are decided in SQL (`now()`), so one clock rules them.
 */
import { Scope } from "@herald/api"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"

export const CodeRow = Schema.Struct({
  clientId: Schema.String,
  userId: Schema.String,
  redirectUri: Schema.String,
  codeChallenge: Schema.String,
  scopes: Schema.Array(Scope),
  resource: Schema.NullOr(Schema.String),
  used: Schema.Boolean,
  expired: Schema.Boolean,
  tokenId: Schema.NullOr(Schema.String)
})
export type CodeRow = typeof CodeRow.Type

/** A refresh token with its grant: whose, which client's, the grant's scopes and whether it still counts. */
export const RefreshRow = Schema.Struct({
  id: Schema.String,
  tokenId: Schema.String,
  userId: Schema.String,
  clientId: Schema.String,
  grantScopes: Schema.Array(Scope),
  used: Schema.Boolean,
  revoked: Schema.Boolean,
  expired: Schema.Boolean
})
export type RefreshRow = typeof RefreshRow.Type

/** The grant behind an access token. */
export const AccessRow = Schema.Struct({ tokenId: Schema.String, userId: Schema.String, clientId: Schema.String })
export type AccessRow = typeof AccessRow.Type

export interface NewCode {
  readonly codeHash: string
  readonly clientId: string
  readonly userId: string
  readonly redirectUri: string
  readonly codeChallenge: string
  readonly scopes: ReadonlyArray<Scope>
  readonly resource: string | null
  readonly ttlSeconds: number
}

export interface NewGrant {
  readonly id: string
  readonly userId: string
  readonly clientId: string
  readonly name: string
  readonly prefix: string
  readonly tokenHash: string
  readonly scopes: ReadonlyArray<Scope>
}

const Id = Schema.Struct({ id: Schema.String })
const Count = Schema.Struct({ count: Schema.Number })

export class GrantsRepo extends Context.Service<GrantsRepo, {
  readonly insertCode: (code: NewCode) => Effect.Effect<void>
  readonly findCode: (codeHash: string) => Effect.Effect<Option.Option<CodeRow>>
  /** Marks a live, unused code used; false when another request used it first (or it expired). */
  readonly consumeCode: (codeHash: string) => Effect.Effect<boolean>
  /** Records the grant a code was exchanged for, so a replay can revoke it. */
  readonly setCodeGrant: (codeHash: string, tokenId: string) => Effect.Effect<void>
  /** The ids of the person's live grants for the client (revoked when a new one is issued). */
  readonly liveGrants: (userId: string, clientId: string) => Effect.Effect<ReadonlyArray<string>>
  readonly insertGrant: (grant: NewGrant) => Effect.Effect<void>
  readonly insertAccess: (a: { tokenHash: string; tokenId: string; scopes: ReadonlyArray<Scope>; ttlSeconds: number }) => Effect.Effect<void>
  readonly insertRefresh: (
    r: { id: string; tokenHash: string; tokenId: string; scopes: ReadonlyArray<Scope>; ttlSeconds: number }
  ) => Effect.Effect<void>
  readonly findRefresh: (tokenHash: string) => Effect.Effect<Option.Option<RefreshRow>>
  /** Revokes the refresh grants of the grant `tokenId` (its api_tokens row was revoked). */
  readonly revokeRefreshOf: (tokenId: string) => Effect.Effect<void>
  /** Marks an unused refresh token used; false when it was used already (a reuse). */
  readonly consumeRefresh: (id: string) => Effect.Effect<boolean>
  readonly findAccess: (tokenHash: string) => Effect.Effect<Option.Option<AccessRow>>
  /** Deletes expired codes, access tokens, refresh tokens and sign-in links (up to `limit` of each); how many. */
  readonly deleteExpired: (limit: number) => Effect.Effect<number>
  readonly inTransaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}>()("herald/GrantsRepo") {
  static readonly layer = Layer.effect(GrantsRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insertCode = SqlSchema.void({
      Request: Schema.Struct({
        codeHash: Schema.String,
        clientId: Schema.String,
        userId: Schema.String,
        redirectUri: Schema.String,
        codeChallenge: Schema.String,
        scopes: Schema.Array(Schema.String),
        resource: Schema.NullOr(Schema.String),
        ttlSeconds: Schema.Number
      }),
      execute: (c) =>
        sql`INSERT INTO oauth_codes (code_hash, client_id, user_id, redirect_uri, code_challenge, scopes, resource, expires_at)
            VALUES (${c.codeHash}, ${c.clientId}, ${c.userId}, ${c.redirectUri}, ${c.codeChallenge}, ${c.scopes}::text[],
                    ${c.resource}, now() + make_interval(secs => ${c.ttlSeconds}))`
    })

    const findCode = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: CodeRow,
      execute: (hash) =>
        sql`SELECT client_id, user_id, redirect_uri, code_challenge, scopes, resource, used_at IS NOT NULL AS used,
                   expires_at <= now() AS expired, token_id
            FROM oauth_codes WHERE code_hash = ${hash}`
    })

    const consumeCode = SqlSchema.findAll({
      Request: Schema.String,
      Result: Schema.Struct({ one: Schema.Number }),
      execute: (hash) =>
        sql`UPDATE oauth_codes SET used_at = now()
            WHERE code_hash = ${hash} AND used_at IS NULL AND expires_at > now() RETURNING 1 AS one`
    })

    const setCodeGrant = SqlSchema.void({
      Request: Schema.Struct({ codeHash: Schema.String, tokenId: Schema.String }),
      execute: ({ codeHash, tokenId }) => sql`UPDATE oauth_codes SET token_id = ${tokenId} WHERE code_hash = ${codeHash}`
    })

    const liveGrants = SqlSchema.findAll({
      Request: Schema.Struct({ userId: Schema.String, clientId: Schema.String }),
      Result: Id,
      execute: ({ clientId, userId }) =>
        sql`SELECT id FROM api_tokens
            WHERE user_id = ${userId} AND kind = 'oauth' AND oauth_client_id = ${clientId} AND revoked_at IS NULL`
    })

    const insertGrant = SqlSchema.void({
      Request: Schema.Struct({
        id: Schema.String,
        userId: Schema.String,
        clientId: Schema.String,
        name: Schema.String,
        prefix: Schema.String,
        tokenHash: Schema.String,
        scopes: Schema.Array(Schema.String)
      }),
      execute: (g) =>
        sql`INSERT INTO api_tokens (id, user_id, name, prefix, token_hash, scopes, kind, oauth_client_id)
            VALUES (${g.id}, ${g.userId}, ${g.name}, ${g.prefix}, ${g.tokenHash}, ${g.scopes}::text[], 'oauth', ${g.clientId})`
    })

    const insertAccess = SqlSchema.void({
      Request: Schema.Struct({
        tokenHash: Schema.String,
        tokenId: Schema.String,
        scopes: Schema.Array(Schema.String),
        ttlSeconds: Schema.Number
      }),
      execute: (a) =>
        sql`INSERT INTO oauth_access_tokens (token_hash, token_id, scopes, expires_at)
            VALUES (${a.tokenHash}, ${a.tokenId}, ${a.scopes}::text[], now() + make_interval(secs => ${a.ttlSeconds}))`
    })

    const insertRefresh = SqlSchema.void({
      Request: Schema.Struct({
        id: Schema.String,
        tokenHash: Schema.String,
        tokenId: Schema.String,
        scopes: Schema.Array(Schema.String),
        ttlSeconds: Schema.Number
      }),
      execute: (r) =>
        sql`INSERT INTO oauth_refresh_grants (id, token_id, token_hash, scopes, expires_at)
            VALUES (${r.id}, ${r.tokenId}, ${r.tokenHash}, ${r.scopes}::text[], now() + make_interval(secs => ${r.ttlSeconds}))`
    })

    const findRefresh = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: RefreshRow,
      execute: (hash) =>
        sql`SELECT r.id, r.token_id, t.user_id, t.oauth_client_id AS client_id, t.scopes AS grant_scopes,
                   r.used_at IS NOT NULL AS used,
                   (r.revoked_at IS NOT NULL OR t.revoked_at IS NOT NULL) AS revoked,
                   (r.expires_at IS NOT NULL AND r.expires_at <= now()) AS expired
            FROM oauth_refresh_grants r JOIN api_tokens t ON t.id = r.token_id
            WHERE r.token_hash = ${hash} AND t.kind = 'oauth'`
    })

    const revokeRefreshOf = (tokenId: string) =>
      sql`UPDATE oauth_refresh_grants SET revoked_at = now() WHERE token_id = ${tokenId} AND revoked_at IS NULL`.pipe(
        Effect.asVoid,
        Effect.orDie
      )

    const consumeRefresh = SqlSchema.findAll({
      Request: Schema.String,
      Result: Schema.Struct({ one: Schema.Number }),
      execute: (id) =>
        sql`UPDATE oauth_refresh_grants SET used_at = now()
            WHERE id = ${id} AND used_at IS NULL AND revoked_at IS NULL RETURNING 1 AS one`
    })

    const findAccess = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: AccessRow,
      execute: (hash) =>
        sql`SELECT t.id AS token_id, t.user_id, t.oauth_client_id AS client_id
            FROM oauth_access_tokens a JOIN api_tokens t ON t.id = a.token_id
            WHERE a.token_hash = ${hash} AND t.kind = 'oauth'`
    })

    // Used refresh tokens stay until they expire: a reuse must still be recognised.
    const deleteExpired = SqlSchema.findOne({
      Request: Schema.Number,
      Result: Count,
      execute: (limit) =>
        sql`WITH c AS (
              DELETE FROM oauth_codes WHERE code_hash IN (
                SELECT code_hash FROM oauth_codes WHERE expires_at < now() - interval '1 day' LIMIT ${limit})
              RETURNING 1
            ), a AS (
              DELETE FROM oauth_access_tokens WHERE token_hash IN (
                SELECT token_hash FROM oauth_access_tokens WHERE expires_at < now() LIMIT ${limit})
              RETURNING 1
            ), r AS (
              DELETE FROM oauth_refresh_grants WHERE id IN (
                SELECT id FROM oauth_refresh_grants WHERE expires_at < now() LIMIT ${limit})
              RETURNING 1
            ), l AS (
              DELETE FROM sign_in_links WHERE token_hash IN (
                SELECT token_hash FROM sign_in_links WHERE used_at IS NOT NULL OR expires_at < now() LIMIT ${limit})
              RETURNING 1
            )
            SELECT ((SELECT count(*) FROM c) + (SELECT count(*) FROM a) + (SELECT count(*) FROM r)
                    + (SELECT count(*) FROM l))::int AS count`
    })

    return GrantsRepo.of({
      insertCode: (c) => insertCode(c).pipe(Effect.orDie),
      findCode: (hash) => findCode(hash).pipe(Effect.orDie),
      consumeCode: (hash) => consumeCode(hash).pipe(Effect.map((rows) => rows.length > 0), Effect.orDie),
      setCodeGrant: (codeHash, tokenId) => setCodeGrant({ codeHash, tokenId }).pipe(Effect.orDie),
      liveGrants: (userId, clientId) => liveGrants({ userId, clientId }).pipe(Effect.map((rows) => rows.map((r) => r.id)), Effect.orDie),
      insertGrant: (g) => insertGrant(g).pipe(Effect.orDie),
      insertAccess: (a) => insertAccess(a).pipe(Effect.orDie),
      insertRefresh: (r) => insertRefresh(r).pipe(Effect.orDie),
      findRefresh: (hash) => findRefresh(hash).pipe(Effect.orDie),
      revokeRefreshOf,
      consumeRefresh: (id) => consumeRefresh(id).pipe(Effect.map((rows) => rows.length > 0), Effect.orDie),
      findAccess: (hash) => findAccess(hash).pipe(Effect.orDie),
      deleteExpired: (limit) => deleteExpired(limit).pipe(Effect.map((r) => r.count), Effect.orDie),
      inTransaction: (effect) => sql.withTransaction(effect).pipe(Effect.catchTag("SqlError", Effect.die))
    })
  }))
}
