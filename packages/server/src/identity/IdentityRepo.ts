/**
 * SQL of the identity capability's tables only: people, sessions, API tokens,
 * devices (authentication reads them through auth/CredentialsRepo.ts; an oauth
 * token's client, refresh grants and a device's queued pushes are the oauth
 * and push repos'). Every query that touches an account's resource is scoped
 * by `user_id` in SQL.
 * Rows decode straight into the contract's records (timestamps arrive as ISO
 * strings, see db/Timestamps.ts); database failures are defects here and
 * become a 500 at the edge, except the unique violations callers turn into 409.
 */
import { ApiToken, Device, Person, TokenKind } from "@herald/api"
import type { Scope } from "@herald/api"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import type { SqlError } from "effect/sql"

/** An account's token as stored: the contract's record, its OAuth client by id (the oauth capability names it). */
export const TokenRow = Schema.Struct({
  id: ApiToken.fields.id,
  name: ApiToken.fields.name,
  prefix: ApiToken.fields.prefix,
  scopes: ApiToken.fields.scopes,
  expiresAt: ApiToken.fields.expiresAt,
  lastUsedAt: ApiToken.fields.lastUsedAt,
  revokedAt: ApiToken.fields.revokedAt,
  createdAt: ApiToken.fields.createdAt,
  kind: TokenKind,
  oauthClientId: Schema.NullOr(Schema.String)
})
export type TokenRow = typeof TokenRow.Type

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
  t.id, t.name, t.prefix, t.scopes, t.kind, t.created_at, t.expires_at, t.last_used_at, t.revoked_at, t.oauth_client_id`

const deviceColumns = (sql: SqlClient.SqlClient) => sql`
  id, platform, device_name, active, live_activities_capable, live_activity_token_environment,
  live_activity_token_updated_at, interactive_live_activities_capable, created_at, last_seen_at`

export class IdentityRepo extends Context.Service<IdentityRepo, {
  readonly insertUser: (user: { id: string; email: string; name: string }) => Effect.Effect<Person, SqlError.SqlError>
  readonly findUser: (emailOrId: string) => Effect.Effect<Option.Option<Person>>
  readonly insertSession: (session: { id: string; userId: string; tokenHash: string }) => Effect.Effect<void>
  readonly insertToken: (token: NewToken) => Effect.Effect<TokenRow>
  /** Up to `limit` of the account's tokens, newest first, after the token `cursor` when given. */
  readonly listTokens: (page: TokensPage) => Effect.Effect<ReadonlyArray<TokenRow>>
  /** Revokes the account's token; none when not the account's. */
  readonly revokeToken: (userId: string, tokenId: string) => Effect.Effect<Option.Option<{ id: string; kind: "token" | "oauth" }>>
  readonly revokeSession: (sessionId: string) => Effect.Effect<void>
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
      Result: TokenRow,
      execute: (t) =>
        sql`INSERT INTO api_tokens AS t (id, user_id, name, prefix, token_hash, scopes, expires_at)
            VALUES (${t.id}, ${t.userId}, ${t.name}, ${t.prefix}, ${t.tokenHash}, ${t.scopes}::text[], ${t.expiresAt}::timestamptz)
            RETURNING ${tokenColumns(sql)}`
    })

    const listTokens = SqlSchema.findAll({
      Request: TokensPage,
      Result: TokenRow,
      // Keyset on (created_at, id), the list's order: a cursor that is not the account's matches no row.
      execute: ({ cursor, limit, userId }) =>
        sql`SELECT ${tokenColumns(sql)} FROM api_tokens t
            WHERE t.user_id = ${userId}
            ${cursor === null ? sql`` : sql`AND (t.created_at, t.id) < (
              SELECT k.created_at, k.id FROM api_tokens k WHERE k.id = ${cursor} AND k.user_id = ${userId})`}
            ORDER BY t.created_at DESC, t.id DESC LIMIT ${limit}`
    })

    const revokeToken = SqlSchema.findOneOption({
      Request: Schema.Struct({ userId: Schema.String, tokenId: Schema.String }),
      Result: RevokedToken,
      execute: ({ tokenId, userId }) =>
        sql`UPDATE api_tokens SET revoked_at = coalesce(revoked_at, now())
            WHERE id = ${tokenId} AND user_id = ${userId}
            RETURNING id, kind`
    })

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
    // What the device still had queued is the outbox's to settle (push/OutboxRepo.ts).
    const deleteDevice = SqlSchema.findOneOption({
      Request: Schema.Struct({ userId: Schema.String, deviceId: Schema.String }),
      Result: Schema.Struct({ id: Schema.String }),
      execute: ({ deviceId, userId }) => sql`DELETE FROM devices WHERE id = ${deviceId} AND user_id = ${userId} RETURNING id`
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
      insertToken: (t) => insertToken(t).pipe(Effect.orDie),
      listTokens: (page) => listTokens(page).pipe(Effect.orDie),
      revokeToken: (userId, tokenId) => revokeToken({ userId, tokenId }).pipe(Effect.orDie),
      revokeSession: (id) => revokeSession(id).pipe(Effect.orDie),
      listDevices: (userId) => listDevices(userId).pipe(Effect.orDie),
      upsertDevice: (d) => upsertDevice(d).pipe(Effect.orDie),
      deleteDevice: (userId, deviceId) => deleteDevice({ userId, deviceId }).pipe(Effect.map(Option.isSome), Effect.orDie),
      setPushToStartToken: (userId, deviceId, token) => setPushToStartToken({ userId, deviceId, token }).pipe(Effect.orDie),
      renameDevice: (userId, deviceId, deviceName) => renameDevice({ userId, deviceId, deviceName }).pipe(Effect.orDie)
    })
  }))
}
