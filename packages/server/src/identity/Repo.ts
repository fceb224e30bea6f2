/**
 * SQL of the identity capability: people, sessions, API tokens, devices. Every
 * query that touches an account's resource is scoped by `user_id` in SQL.
 * Rows decode straight into the contract's records (timestamps arrive as ISO
 * strings, see db/Timestamps.ts); database failures are defects here and
 * become a 500 at the edge, except the unique violations callers turn into 409.
 */
import { ApiToken, Device, Person, Scope } from "@herald/api"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import type { SqlError } from "effect/sql"

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

/** A page of an account's tokens (see `IdentityRepo.listTokens`). */
export const TokensPage = Schema.Struct({ userId: Schema.String, cursor: Schema.NullOr(Schema.String), limit: Schema.Int })
export type TokensPage = typeof TokensPage.Type

/** A device as a push, prompt or live activity picks it: whose it is and what it can show. */
export const TargetDevice = Schema.Struct({
  id: Device.fields.id,
  userId: Schema.String,
  active: Device.fields.active,
  liveActivitiesCapable: Device.fields.liveActivitiesCapable,
  interactiveLiveActivitiesCapable: Device.fields.interactiveLiveActivitiesCapable
})
export type TargetDevice = typeof TargetDevice.Type

const Revoked = Schema.Struct({ id: Schema.String, revokedAt: Schema.String })
const RevokedToken = Schema.Struct({ id: Schema.String, kind: Schema.Literals(["token", "oauth"]) })

export interface NewToken {
  readonly id: string
  readonly userId: string
  readonly name: string
  readonly prefix: string
  readonly tokenHash: string
  readonly scopes: ReadonlyArray<Scope>
  readonly expiresAt: string | null
}

export interface NewDevice {
  readonly id: string
  readonly userId: string
  readonly platform: "ios" | "android" | "web"
  readonly deviceName: string | null
  /** A phone's provider token; a browser's push service endpoint. */
  readonly pushToken: string
  readonly liveActivitiesCapable: boolean
  readonly interactiveLiveActivitiesCapable: boolean
  readonly liveActivityTokenEnvironment: "sandbox" | "production" | null
  /** A browser's Web Push keys (base64url); null for phones. */
  readonly webPushP256dh: string | null
  readonly webPushAuth: string | null
}

/** True when the failure is a unique violation (an email or a push token already taken). */
export const isUniqueViolation = (error: SqlError.SqlError) => error.reason._tag === "UniqueViolation"

const tokenColumns = (sql: SqlClient.SqlClient) => sql`
  t.id, t.name, t.prefix, t.scopes, t.kind, t.created_at, t.expires_at, t.last_used_at, t.revoked_at,
  CASE WHEN c.id IS NULL THEN NULL ELSE json_build_object('clientId', c.id, 'name', c.name) END AS oauth_client`

const deviceColumns = (sql: SqlClient.SqlClient) => sql`
  id, platform, device_name, active, live_activities_capable, live_activity_token_environment,
  live_activity_token_updated_at, interactive_live_activities_capable, created_at, last_seen_at`

export class IdentityRepo extends Context.Service<IdentityRepo, {
  readonly insertUser: (user: { id: string; email: string; name: string }) => Effect.Effect<Person, SqlError.SqlError>
  readonly findUser: (emailOrId: string) => Effect.Effect<Option.Option<Person>>
  readonly insertSession: (session: { id: string; userId: string; tokenHash: string }) => Effect.Effect<void>
  readonly findSessionByHash: (hash: string) => Effect.Effect<Option.Option<CredentialRow>>
  readonly findTokenByHash: (hash: string) => Effect.Effect<Option.Option<CredentialRow>>
  /**
   * An OAuth access token (`hlo_…`), as the credential of its grant: the grant's
   * id, name and revocation, the access token's own scopes and the earlier of
   * the two expiries.
   */
  readonly findAccessTokenByHash: (hash: string) => Effect.Effect<Option.Option<CredentialRow>>
  readonly insertToken: (token: NewToken) => Effect.Effect<ApiToken>
  /** Up to `limit` of the account's tokens, newest first, after the token `cursor` when given. */
  readonly listTokens: (page: TokensPage) => Effect.Effect<ReadonlyArray<ApiToken>>
  /** Revokes the account's token (and an oauth token's refresh grants); none when not the account's. */
  readonly revokeToken: (userId: string, tokenId: string) => Effect.Effect<Option.Option<{ id: string; kind: "token" | "oauth" }>>
  readonly revokeSession: (sessionId: string) => Effect.Effect<void>
  /** Tokens and sessions revoked after `since`, for cache eviction on every node. */
  readonly revokedSince: (since: string) => Effect.Effect<ReadonlyArray<{ id: string; revokedAt: string }>>
  readonly touchTokens: (uses: ReadonlyArray<{ id: string; lastUsedAt: string }>) => Effect.Effect<void>
  readonly touchSessions: (uses: ReadonlyArray<{ id: string; lastUsedAt: string }>) => Effect.Effect<void>
  readonly listDevices: (userId: string) => Effect.Effect<ReadonlyArray<Device>>
  readonly upsertDevice: (device: NewDevice) => Effect.Effect<Device>
  readonly deleteDevice: (userId: string, deviceId: string) => Effect.Effect<boolean>
  readonly setPushToStartToken: (userId: string, deviceId: string, token: string) => Effect.Effect<Option.Option<Device>>
  readonly renameDevice: (userId: string, deviceId: string, deviceName: string | null) => Effect.Effect<Option.Option<Device>>
  /** The active devices of these accounts, in registration order. */
  readonly activeDevices: (userIds: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<TargetDevice>>
  /** Those of `deviceIds` that are the account's (active or not), in registration order. */
  readonly accountDevices: (userId: string, deviceIds: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<TargetDevice>>
}>()("herald/IdentityRepo") {
  static readonly layer = Layer.effect(IdentityRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insertUser = SqlSchema.findOne({
      Request: Schema.Struct({ id: Schema.String, email: Schema.String, name: Schema.String }),
      Result: Person,
      execute: (u) => sql`INSERT INTO users ${sql.insert(u)} RETURNING id, email, name`
    })

    const findUser = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: Person,
      execute: (key) => sql`SELECT id, email, name FROM users WHERE id = ${key} OR lower(email) = lower(${key}) LIMIT 1`
    })

    const credentialByHash = (table: "api_tokens" | "sessions") =>
      SqlSchema.findOneOption({
        Request: Schema.String,
        Result: CredentialRow,
        execute: (hash) =>
          table === "api_tokens"
            ? sql`SELECT id, user_id, name, prefix, scopes, created_at, expires_at, last_used_at, revoked_at
                  FROM api_tokens WHERE token_hash = ${hash}`
            : sql`SELECT id, user_id, 'session' AS name, 'hls_' AS prefix, ARRAY[]::text[] AS scopes, created_at,
                         expires_at, last_used_at, revoked_at
                  FROM sessions WHERE token_hash = ${hash}`
      })

    const accessTokenByHash = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: CredentialRow,
      execute: (hash) =>
        sql`SELECT t.id, t.user_id, t.name, t.prefix, a.scopes, t.created_at,
                   least(a.expires_at, t.expires_at) AS expires_at, t.last_used_at, t.revoked_at
            FROM oauth_access_tokens a JOIN api_tokens t ON t.id = a.token_id
            WHERE a.token_hash = ${hash}`
    })

    const insertToken = SqlSchema.findOne({
      Request: Schema.Struct({
        id: Schema.String,
        userId: Schema.String,
        name: Schema.String,
        prefix: Schema.String,
        tokenHash: Schema.String,
        scopes: Schema.Array(Schema.String),
        expiresAt: Schema.NullOr(Schema.String)
      }),
      Result: ApiToken,
      execute: (t) =>
        sql`WITH t AS (
              INSERT INTO api_tokens (id, user_id, name, prefix, token_hash, scopes, expires_at)
              VALUES (${t.id}, ${t.userId}, ${t.name}, ${t.prefix}, ${t.tokenHash}, ${t.scopes}::text[], ${t.expiresAt}::timestamptz)
              RETURNING *
            )
            SELECT ${tokenColumns(sql)} FROM t LEFT JOIN oauth_clients c ON c.id = t.oauth_client_id`
    })

    const listTokens = SqlSchema.findAll({
      Request: TokensPage,
      Result: ApiToken,
      // Keyset on (created_at, id), the list's order: a cursor that is not the account's matches no row.
      execute: ({ cursor, limit, userId }) =>
        sql`SELECT ${tokenColumns(sql)} FROM api_tokens t LEFT JOIN oauth_clients c ON c.id = t.oauth_client_id
            WHERE t.user_id = ${userId}
            ${cursor === null ? sql`` : sql`AND (t.created_at, t.id) < (
              SELECT k.created_at, k.id FROM api_tokens k WHERE k.id = ${cursor} AND k.user_id = ${userId})`}
            ORDER BY t.created_at DESC, t.id DESC LIMIT ${limit}`
    })

    const revokeToken = SqlSchema.findOneOption({
      Request: Schema.Struct({ userId: Schema.String, tokenId: Schema.String }),
      Result: RevokedToken,
      execute: ({ tokenId, userId }) =>
        sql`WITH t AS (
              UPDATE api_tokens SET revoked_at = coalesce(revoked_at, now())
              WHERE id = ${tokenId} AND user_id = ${userId}
              RETURNING id, kind
            ), g AS (
              UPDATE oauth_refresh_grants SET revoked_at = now()
              WHERE token_id IN (SELECT id FROM t) AND revoked_at IS NULL
            )
            SELECT id, kind FROM t`
    })

    const revokedSince = SqlSchema.findAll({
      Request: Schema.String,
      Result: Revoked,
      execute: (since) =>
        sql`SELECT id, revoked_at FROM api_tokens WHERE revoked_at > ${since}::timestamptz
            UNION ALL
            SELECT id, revoked_at FROM sessions WHERE revoked_at > ${since}::timestamptz`
    })

    const touch = (table: "api_tokens" | "sessions") =>
    (uses: ReadonlyArray<{ id: string; lastUsedAt: string }>) =>
      uses.length === 0 ? Effect.void : sql`
        UPDATE ${sql(table)} AS x SET last_used_at = u.last_used_at
        FROM unnest(${uses.map((u) => u.id)}::text[], ${uses.map((u) => u.lastUsedAt)}::timestamptz[])
          AS u(id, last_used_at)
        WHERE x.id = u.id AND (x.last_used_at IS NULL OR x.last_used_at < u.last_used_at)`.pipe(Effect.asVoid, Effect.orDie)

    const listDevices = SqlSchema.findAll({
      Request: Schema.String,
      Result: Device,
      execute: (userId) =>
        sql`SELECT ${deviceColumns(sql)} FROM devices WHERE user_id = ${userId} ORDER BY created_at DESC, id DESC`
    })

    // A push token names one app install. Registered again by the same person,
    // that row is updated and reactivated. Registered by another person (the
    // phone changed hands), the old row is retired first: inactive (no more
    // pushes; its live activities fail it on their next operation), its history
    // left with its owner, its token one no registration can send (push tokens
    // hold no whitespace). The newcomer gets a device of their own and never the
    // old owner's id, deliveries or activities.
    const retireForeign = (d: NewDevice) =>
      sql`UPDATE devices SET push_token = 'retired ' || id, push_to_start_token = NULL, active = false, updated_at = now()
          WHERE platform = ${d.platform} AND push_token = ${d.pushToken} AND user_id <> ${d.userId}`
    const upsertOwn = SqlSchema.findOneOption({
      Request: Schema.Struct({
        id: Schema.String,
        userId: Schema.String,
        platform: Schema.String,
        deviceName: Schema.NullOr(Schema.String),
        pushToken: Schema.String,
        liveActivitiesCapable: Schema.Boolean,
        interactiveLiveActivitiesCapable: Schema.Boolean,
        liveActivityTokenEnvironment: Schema.NullOr(Schema.String),
        webPushP256dh: Schema.NullOr(Schema.String),
        webPushAuth: Schema.NullOr(Schema.String)
      }),
      Result: Device,
      execute: (d) =>
        sql`INSERT INTO devices ${sql.insert(d)}
            ON CONFLICT (platform, push_token) DO UPDATE SET
              device_name = excluded.device_name,
              web_push_p256dh = excluded.web_push_p256dh,
              web_push_auth = excluded.web_push_auth,
              live_activities_capable = excluded.live_activities_capable,
              interactive_live_activities_capable = excluded.interactive_live_activities_capable,
              live_activity_token_environment = excluded.live_activity_token_environment,
              active = true,
              updated_at = now(),
              last_seen_at = now()
            WHERE devices.user_id = excluded.user_id
            RETURNING ${deviceColumns(sql)}`
    })
    // None: another person registered the token between the two statements; retire theirs in turn (a few times at most).
    const upsertDevice = (d: NewDevice, tries = 3): Effect.Effect<Device, SqlError.SqlError | Schema.SchemaError> =>
      sql.withTransaction(Effect.andThen(retireForeign(d), upsertOwn(d))).pipe(
        Effect.flatMap(Option.match({
          onNone: () => tries > 1 ? upsertDevice(d, tries - 1) : Effect.die(new Error("push token registration kept losing a race")),
          onSome: Effect.succeed
        }))
      )

    const setPushToStartToken = SqlSchema.findOneOption({
      Request: Schema.Struct({ userId: Schema.String, deviceId: Schema.String, token: Schema.String }),
      Result: Device,
      execute: ({ deviceId, token, userId }) =>
        sql`UPDATE devices SET push_to_start_token = ${token}, live_activity_token_updated_at = now(),
                               updated_at = now(), last_seen_at = now()
            WHERE id = ${deviceId} AND user_id = ${userId}
            RETURNING ${deviceColumns(sql)}`
    })

    const renameDevice = SqlSchema.findOneOption({
      Request: Schema.Struct({ userId: Schema.String, deviceId: Schema.String, deviceName: Schema.NullOr(Schema.String) }),
      Result: Device,
      execute: ({ deviceId, deviceName, userId }) =>
        sql`UPDATE devices SET device_name = ${deviceName}, updated_at = now()
            WHERE id = ${deviceId} AND user_id = ${userId}
            RETURNING ${deviceColumns(sql)}`
    })

    const insertSession = SqlSchema.void({
      Request: Schema.Struct({ id: Schema.String, userId: Schema.String, tokenHash: Schema.String }),
      execute: (session) => sql`INSERT INTO sessions ${sql.insert(session)}`
    })
    const revokeSession = SqlSchema.void({
      Request: Schema.String,
      execute: (id) => sql`UPDATE sessions SET revoked_at = coalesce(revoked_at, now()) WHERE id = ${id}`
    })
    // Its receipts stay (they are delivery history); what it still had queued will never go. The
    // queue knows what is queued for a device (migrations/0015_push_queue.ts); a push being sent
    // right now is left to its answer.
    const deleteDevice = SqlSchema.findOneOption({
      Request: Schema.Struct({ userId: Schema.String, deviceId: Schema.String }),
      Result: Schema.Struct({ id: Schema.String }),
      execute: ({ deviceId, userId }) =>
        sql`WITH gone AS (DELETE FROM devices WHERE id = ${deviceId} AND user_id = ${userId} RETURNING id),
              dequeued AS (
                DELETE FROM push_queue WHERE device_id IN (SELECT id FROM gone) AND claimed_by IS NULL
                RETURNING receipt_id),
              settled AS (
                UPDATE push_receipts SET status = 'error', error_code = 'DeviceRemoved', checked_at = now()
                WHERE id IN (SELECT receipt_id FROM dequeued) AND status = 'pending')
            SELECT id FROM gone`
    })

    const targetColumns = sql`id, user_id, active, live_activities_capable, interactive_live_activities_capable`
    const activeDevices = SqlSchema.findAll({
      Request: Schema.Array(Schema.String),
      Result: TargetDevice,
      execute: (userIds) =>
        sql`SELECT ${targetColumns} FROM devices WHERE user_id = ANY(${userIds}::text[]) AND active ORDER BY created_at, id`
    })
    const accountDevices = SqlSchema.findAll({
      Request: Schema.Struct({ userId: Schema.String, deviceIds: Schema.Array(Schema.String) }),
      Result: TargetDevice,
      execute: ({ deviceIds, userId }) =>
        sql`SELECT ${targetColumns} FROM devices WHERE user_id = ${userId} AND id = ANY(${deviceIds}::text[])
            ORDER BY created_at, id`
    })

    return IdentityRepo.of({
      activeDevices: (userIds) => activeDevices(userIds).pipe(Effect.orDie),
      accountDevices: (userId, deviceIds) => accountDevices({ userId, deviceIds }).pipe(Effect.orDie),
      insertUser: (u) => insertUser(u).pipe(Effect.catchTag(["SchemaError", "NoSuchElementError"], Effect.die)),
      findUser: (key) => findUser(key).pipe(Effect.orDie),
      insertSession: (s) => insertSession(s).pipe(Effect.orDie),
      findSessionByHash: (hash) => credentialByHash("sessions")(hash).pipe(Effect.orDie),
      findTokenByHash: (hash) => credentialByHash("api_tokens")(hash).pipe(Effect.orDie),
      findAccessTokenByHash: (hash) => accessTokenByHash(hash).pipe(Effect.orDie),
      insertToken: (t) => insertToken(t).pipe(Effect.orDie),
      listTokens: (page) => listTokens(page).pipe(Effect.orDie),
      revokeToken: (userId, tokenId) => revokeToken({ userId, tokenId }).pipe(Effect.orDie),
      revokeSession: (id) => revokeSession(id).pipe(Effect.orDie),
      revokedSince: (since) => revokedSince(since).pipe(Effect.orDie),
      touchTokens: touch("api_tokens"),
      touchSessions: touch("sessions"),
      listDevices: (userId) => listDevices(userId).pipe(Effect.orDie),
      upsertDevice: (d) => upsertDevice(d).pipe(Effect.orDie),
      deleteDevice: (userId, deviceId) => deleteDevice({ userId, deviceId }).pipe(Effect.map(Option.isSome), Effect.orDie),
      setPushToStartToken: (userId, deviceId, token) => setPushToStartToken({ userId, deviceId, token }).pipe(Effect.orDie),
      renameDevice: (userId, deviceId, deviceName) => renameDevice({ userId, deviceId, deviceName }).pipe(Effect.orDie)
    })
  }))
}
