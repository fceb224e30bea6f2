/**
 * SQL of tunnel connectors: the connector rows (routes as jsonb, the sealed
 * callback secret), their passes and sessions (hashes only), and the use of a
 * recorded callback delivery. Every read and write of a connector is scoped to
 * its owner, so another account's connector is simply not found. Times come
 * from the service's clock as ISO strings.
 */
import { ConnectorRoute } from "@herald/api"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { countLocked, LockSpace } from "../db/AccountLocks.ts"

const iso = (column: string) => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`

/** A connector as stored, before `online` is computed. */
export const ConnectorRow = Schema.Struct({
  id: Schema.String,
  userId: Schema.String,
  name: Schema.String,
  routes: Schema.Array(ConnectorRoute),
  oncallGroupId: Schema.NullOr(Schema.String),
  lastSeenAt: Schema.NullOr(Schema.String),
  createdAt: Schema.String,
  updatedAt: Schema.String
})
export type ConnectorRow = typeof ConnectorRow.Type

export interface NewConnector {
  readonly id: string
  readonly userId: string
  readonly name: string
  readonly routes: ReadonlyArray<ConnectorRoute>
  readonly oncallGroupId: string | null
  readonly secretSealed: string
  readonly now: string
}

export interface ConnectorChanges {
  readonly name?: string
  readonly routes?: ReadonlyArray<ConnectorRoute>
  readonly oncallGroupId?: string | null
}

const Owned = Schema.Struct({ userId: Schema.String, id: Schema.String })

export class ConnectorsRepo extends Context.Service<ConnectorsRepo, {
  readonly inTransaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  readonly list: (userId: string) => Effect.Effect<ReadonlyArray<ConnectorRow>>
  readonly find: (userId: string, id: string) => Effect.Effect<ConnectorRow | undefined>
  /** The person's connector count, under their lock (call inside a transaction). */
  readonly countLocked: (userId: string) => Effect.Effect<number>
  readonly insert: (row: NewConnector) => Effect.Effect<ConnectorRow>
  readonly update: (userId: string, id: string, changes: ConnectorChanges, now: string) => Effect.Effect<ConnectorRow | undefined>
  readonly remove: (userId: string, id: string) => Effect.Effect<boolean>
  readonly heartbeat: (userId: string, id: string, now: string) => Effect.Effect<ConnectorRow | undefined>
  readonly setSecret: (userId: string, id: string, sealed: string, now: string) => Effect.Effect<ConnectorRow | undefined>
  /** The sealed callback secret of the caller's connector. */
  readonly sealedSecret: (userId: string, id: string) => Effect.Effect<string | undefined>
  /** Whether `groupId` is an on-call group of a team or family the person belongs to. */
  readonly groupVisible: (userId: string, groupId: string) => Effect.Effect<boolean>
  /** Whether the person may use the connector: its owner, or a member of the team of its on-call group. */
  readonly mayUse: (personId: string, connectorId: string) => Effect.Effect<boolean>
  readonly insertPass: (row: { passHash: string; connectorId: string; userId: string; expiresAt: string }) => Effect.Effect<void>
  /** Marks an unused, unexpired pass of the owner's connector used; its person, or undefined. */
  readonly consumePass: (ownerId: string, connectorId: string, passHash: string, now: string) => Effect.Effect<string | undefined>
  readonly insertSession: (row: { tokenHash: string; connectorId: string; userId: string; expiresAt: string }) => Effect.Effect<void>
  /** An unexpired session of the owner's connector. */
  readonly findSession: (ownerId: string, connectorId: string, tokenHash: string, now: string) => Effect.Effect<
    { readonly userId: string; readonly expiresAt: string } | undefined
  >
  /** Marks a recorded, unused delivery of the connector with this body digest used; its path, or undefined. */
  readonly useDelivery: (connectorId: string, deliveryId: string, bodySha256: string, now: string) => Effect.Effect<string | undefined>
}>()("herald/ConnectorsRepo") {
  static readonly layer = Layer.effect(ConnectorsRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = sql.literal(`c.id, c.user_id, c.name, c.routes, c.oncall_group_id, ${iso("c.last_seen_at")} AS last_seen_at,
      ${iso("c.created_at")} AS created_at, ${iso("c.updated_at")} AS updated_at`)
    const returning = sql.literal(`id, user_id, name, routes, oncall_group_id, ${iso("last_seen_at")} AS last_seen_at,
      ${iso("created_at")} AS created_at, ${iso("updated_at")} AS updated_at`)
    const die = <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.orDie(effect)
    const opt = <A>(o: Option.Option<A>) => Option.getOrUndefined(o)

    const list = SqlSchema.findAll({
      Request: Schema.String,
      Result: ConnectorRow,
      execute: (userId) => sql`SELECT ${columns} FROM connectors c WHERE c.user_id = ${userId} ORDER BY c.id DESC`
    })
    const find = SqlSchema.findOneOption({
      Request: Owned,
      Result: ConnectorRow,
      execute: ({ id, userId }) => sql`SELECT ${columns} FROM connectors c WHERE c.id = ${id} AND c.user_id = ${userId}`
    })
    const rowOrNone = (statement: Effect.Effect<ReadonlyArray<unknown>, unknown>) =>
      SqlSchema.findOneOption({ Request: Schema.Void, Result: ConnectorRow, execute: () => statement })(undefined).pipe(Effect.map(opt), die)

    const flag = (statement: Effect.Effect<ReadonlyArray<unknown>, unknown>) =>
      Effect.map(die(statement), (rows) => rows.length > 0)

    const single = <S extends Schema.Top>(Result: S, statement: Effect.Effect<ReadonlyArray<unknown>, unknown>) =>
      SqlSchema.findOneOption({ Request: Schema.Void, Result, execute: () => statement })(undefined).pipe(Effect.map(opt), die)

    return ConnectorsRepo.of({
      inTransaction: (effect) => sql.withTransaction(effect).pipe(Effect.catchTag("SqlError", Effect.die)),
      list: (userId) => die(list(userId)),
      find: (userId, id) => find({ userId, id }).pipe(Effect.map(opt), die),
      countLocked: (userId) =>
        countLocked(sql, LockSpace.connectors, userId, sql`SELECT count(*)::int AS n FROM connectors WHERE user_id = ${userId}`),
      insert: (row) =>
        rowOrNone(sql`INSERT INTO connectors (id, user_id, name, routes, oncall_group_id, secret_sealed, created_at, updated_at)
          VALUES (${row.id}, ${row.userId}, ${row.name}, ${JSON.stringify(row.routes)}::jsonb, ${row.oncallGroupId},
                  ${row.secretSealed}, ${row.now}::timestamptz, ${row.now}::timestamptz)
          RETURNING ${returning}`).pipe(Effect.map((r) => r!)),
      update: (userId, id, changes, now) =>
        rowOrNone(sql`UPDATE connectors SET
            name = COALESCE(${changes.name ?? null}, name),
            routes = COALESCE(${changes.routes === undefined ? null : JSON.stringify(changes.routes)}::jsonb, routes),
            oncall_group_id = CASE WHEN ${changes.oncallGroupId !== undefined} THEN ${changes.oncallGroupId ?? null} ELSE oncall_group_id END,
            updated_at = ${now}::timestamptz
          WHERE id = ${id} AND user_id = ${userId} RETURNING ${returning}`),
      remove: (userId, id) => flag(sql`DELETE FROM connectors WHERE id = ${id} AND user_id = ${userId} RETURNING id`),
      heartbeat: (userId, id, now) =>
        rowOrNone(sql`UPDATE connectors SET last_seen_at = ${now}::timestamptz
          WHERE id = ${id} AND user_id = ${userId} RETURNING ${returning}`),
      setSecret: (userId, id, sealed, now) =>
        rowOrNone(sql`UPDATE connectors SET secret_sealed = ${sealed}, updated_at = ${now}::timestamptz
          WHERE id = ${id} AND user_id = ${userId} RETURNING ${returning}`),
      sealedSecret: (userId, id) =>
        single(Schema.Struct({ secretSealed: Schema.String }),
          sql`SELECT secret_sealed FROM connectors WHERE id = ${id} AND user_id = ${userId}`).pipe(
            Effect.map((row) => row?.secretSealed)
          ),
      groupVisible: (userId, groupId) =>
        flag(sql`SELECT 1 FROM oncall_groups g JOIN team_members m ON m.team_id = g.team_id AND m.user_id = ${userId}
          WHERE g.id = ${groupId}`),
      mayUse: (personId, connectorId) =>
        flag(sql`SELECT 1 FROM connectors c WHERE c.id = ${connectorId} AND (c.user_id = ${personId} OR EXISTS (
            SELECT 1 FROM oncall_groups g JOIN team_members m ON m.team_id = g.team_id
            WHERE g.id = c.oncall_group_id AND m.user_id = ${personId}))`),
      insertPass: (row) =>
        die(sql`INSERT INTO connector_passes (pass_hash, connector_id, user_id, expires_at)
          VALUES (${row.passHash}, ${row.connectorId}, ${row.userId}, ${row.expiresAt}::timestamptz)`).pipe(Effect.asVoid),
      consumePass: (ownerId, connectorId, passHash, now) =>
        single(Schema.Struct({ userId: Schema.String }), sql`UPDATE connector_passes p SET used_at = ${now}::timestamptz
          FROM connectors c
          WHERE p.pass_hash = ${passHash} AND p.connector_id = ${connectorId} AND c.id = p.connector_id
            AND c.user_id = ${ownerId} AND p.used_at IS NULL AND p.expires_at > ${now}::timestamptz
          RETURNING p.user_id`).pipe(Effect.map((row) => row?.userId)),
      insertSession: (row) =>
        die(sql`INSERT INTO connector_sessions (token_hash, connector_id, user_id, expires_at)
          VALUES (${row.tokenHash}, ${row.connectorId}, ${row.userId}, ${row.expiresAt}::timestamptz)`).pipe(Effect.asVoid),
      findSession: (ownerId, connectorId, tokenHash, now) =>
        single(Schema.Struct({ userId: Schema.String, expiresAt: Schema.String }),
          sql`SELECT s.user_id, ${sql.literal(iso("s.expires_at"))} AS expires_at
            FROM connector_sessions s JOIN connectors c ON c.id = s.connector_id
            WHERE s.token_hash = ${tokenHash} AND s.connector_id = ${connectorId} AND c.user_id = ${ownerId}
              AND s.expires_at > ${now}::timestamptz`),
      useDelivery: (connectorId, deliveryId, bodySha256, now) =>
        single(Schema.Struct({ path: Schema.String }), sql`UPDATE connector_deliveries SET used_at = ${now}::timestamptz
          WHERE delivery_id = ${deliveryId} AND connector_id = ${connectorId} AND body_sha256 = ${bodySha256}
            AND used_at IS NULL
          RETURNING path`).pipe(Effect.map((row) => row?.path))
    })
  }))
}
