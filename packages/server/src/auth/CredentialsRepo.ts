/**
 * SQL of authentication: a credential found by the hash of its secret (an API
 * token, a session, an OAuth access token as its grant), revocations made
 * anywhere since a moment, `last_used_at` written back, and the database's
 * clock, so the revocation poll's watermark starts from the time the rows are
 * stamped with, whatever this process's clock says.
 */
import { Scope } from "@herald/api"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"

/** What authentication needs of an API token or a session, found by hash. */
export const CredentialRow = Schema.Struct({
  id: Schema.String,
  userId: Schema.String,
  name: Schema.String,
  prefix: Schema.String,
  scopes: Schema.Array(Scope),
  createdAt: Schema.String,
  expiresAt: Schema.NullOr(Schema.String),
  lastUsedAt: Schema.NullOr(Schema.String),
  revokedAt: Schema.NullOr(Schema.String)
})
export type CredentialRow = typeof CredentialRow.Type

/** What a bearer is: an API token, a session token, or an OAuth access token (`hlo_…`, as its grant). */
export type CredentialKind = "token" | "session" | "access"

/** A use of a credential to write back. */
export interface Use {
  readonly id: string
  readonly lastUsedAt: string
}

const Revoked = Schema.Struct({ id: Schema.String, revokedAt: Schema.String })

export class CredentialsRepo extends Context.Service<CredentialsRepo, {
  /**
   * The credential whose secret hashes to `hash`. An access token is the
   * credential of its grant: the grant's id, name and revocation, the access
   * token's own scopes and the earlier of the two expiries.
   */
  readonly findByHash: (kind: CredentialKind, hash: string) => Effect.Effect<Option.Option<CredentialRow>>
  /** Tokens and sessions revoked after `since`, for cache eviction on every node. */
  readonly revokedSince: (since: string) => Effect.Effect<ReadonlyArray<{ id: string; revokedAt: string }>>
  /** Moves `last_used_at` forward (never back) for these tokens or sessions. */
  readonly touch: (kind: "token" | "session", uses: ReadonlyArray<Use>) => Effect.Effect<void>
  /** `now()` of the database, as an ISO 8601 string. */
  readonly databaseNow: Effect.Effect<string>
}>()("herald/CredentialsRepo") {
  static readonly layer = Layer.effect(CredentialsRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const byHash = (execute: (hash: string) => Effect.Effect<ReadonlyArray<unknown>, unknown>) =>
      SqlSchema.findOneOption({ Request: Schema.String, Result: CredentialRow, execute })
    const finders: Record<CredentialKind, (hash: string) => Effect.Effect<Option.Option<CredentialRow>, unknown>> = {
      token: byHash((hash) =>
        sql`SELECT id, user_id, name, prefix, scopes, created_at, expires_at, last_used_at, revoked_at
            FROM api_tokens WHERE token_hash = ${hash}`),
      session: byHash((hash) =>
        sql`SELECT id, user_id, 'session' AS name, 'hls_' AS prefix, ARRAY[]::text[] AS scopes, created_at,
                   expires_at, last_used_at, revoked_at
            FROM sessions WHERE token_hash = ${hash}`),
      access: byHash((hash) =>
        sql`SELECT t.id, t.user_id, t.name, t.prefix, a.scopes, t.created_at,
                   least(a.expires_at, t.expires_at) AS expires_at, t.last_used_at, t.revoked_at
            FROM oauth_access_tokens a JOIN api_tokens t ON t.id = a.token_id
            WHERE a.token_hash = ${hash}`)
    }

    const revokedSince = SqlSchema.findAll({
      Request: Schema.String,
      Result: Revoked,
      execute: (since) =>
        sql`SELECT id, revoked_at FROM api_tokens WHERE revoked_at > ${since}::timestamptz
            UNION ALL
            SELECT id, revoked_at FROM sessions WHERE revoked_at > ${since}::timestamptz`
    })

    const touch = (kind: "token" | "session", uses: ReadonlyArray<Use>) =>
      uses.length === 0 ? Effect.void : sql`
        UPDATE ${sql(kind === "token" ? "api_tokens" : "sessions")} AS x SET last_used_at = u.last_used_at
        FROM unnest(${uses.map((u) => u.id)}::text[], ${uses.map((u) => u.lastUsedAt)}::timestamptz[])
          AS u(id, last_used_at)
        WHERE x.id = u.id AND (x.last_used_at IS NULL OR x.last_used_at < u.last_used_at)`.pipe(Effect.asVoid, Effect.orDie)

    const now = SqlSchema.findOne({
      Request: Schema.Void,
      Result: Schema.Struct({ now: Schema.String }),
      execute: () => sql`SELECT now() AS now`
    })

    return CredentialsRepo.of({
      findByHash: (kind, hash) => finders[kind](hash).pipe(Effect.orDie),
      revokedSince: (since) => revokedSince(since).pipe(Effect.orDie),
      touch,
      databaseNow: Effect.map(now(undefined), (row) => row.now).pipe(Effect.orDie)
    })
  }))
}
