/**
 * The SQL of a tunnel connector's heartbeat watch (`connector_watches`,
 * migration 0027). The last heartbeat is the connector's own `last_seen_at`:
 * a heartbeat writes nothing here. As for services (WatchRepo.ts), each move
 * is one conditional update: silent only from the state the alert was decided
 * on, resumed only from the silence it ends.
 */
import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import type { Statement } from "effect/sql"

/** A connector's watch with what its alert needs. */
export const ConnectorWatchRow = Schema.Struct({
  connectorId: Schema.String,
  name: Schema.String,
  userId: Schema.String,
  alertAfterSeconds: Schema.Number,
  startedAt: Schema.String,
  lastSeenAt: Schema.NullOr(Schema.String),
  silentSince: Schema.NullOr(Schema.String)
})
export type ConnectorWatchRow = typeof ConnectorWatchRow.Type

/** When the alert is due: the last heartbeat (or the watch's start, if later) + `alertAfterSeconds`. */
export const connectorBaseOf = (w: Pick<ConnectorWatchRow, "startedAt" | "lastSeenAt">) =>
  Math.max(Date.parse(w.startedAt), w.lastSeenAt === null ? 0 : Date.parse(w.lastSeenAt))
export const connectorDueOf = (w: Pick<ConnectorWatchRow, "startedAt" | "lastSeenAt" | "alertAfterSeconds">) =>
  connectorBaseOf(w) + w.alertAfterSeconds * 1000

export class ConnectorWatchRepo extends Context.Service<ConnectorWatchRepo, {
  /** Saves (restarting it at `startedAt`) or, given null, removes the watch, in the caller's transaction. */
  readonly save: (connectorId: string, alertAfterSeconds: number | null, startedAt: string) => Effect.Effect<void>
  readonly find: (connectorId: string) => Effect.Effect<ConnectorWatchRow | undefined>
  /** The watches of these connectors (those that have one). */
  readonly states: (connectorIds: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<ConnectorWatchRow>>
  /** Every watch (start-up re-arm). */
  readonly all: Effect.Effect<ReadonlyArray<ConnectorWatchRow>>
  readonly markSilent: (w: ConnectorWatchRow, since: string) => Effect.Effect<boolean>
  readonly markResumed: (connectorId: string, since: string) => Effect.Effect<boolean>
  readonly inTransaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}>()("herald/ConnectorWatchRepo") {
  static readonly layer = Layer.effect(ConnectorWatchRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = sql`w.connector_id, c.name, c.user_id, w.alert_after_seconds, w.started_at, c.last_seen_at, w.silent_since`
    const ran = (statement: Statement.Statement<unknown>) => statement.pipe(Effect.map((rows) => rows.length > 0), Effect.orDie)

    const find = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: ConnectorWatchRow,
      execute: (id) => sql`SELECT ${columns} FROM connector_watches w JOIN connectors c ON c.id = w.connector_id WHERE w.connector_id = ${id}`
    })
    const states = SqlSchema.findAll({
      Request: Schema.Array(Schema.String),
      Result: ConnectorWatchRow,
      execute: (ids) =>
        sql`SELECT ${columns} FROM connector_watches w JOIN connectors c ON c.id = w.connector_id WHERE w.connector_id = ANY(${ids}::text[])`
    })
    const all = SqlSchema.findAll({
      Request: Schema.Void,
      Result: ConnectorWatchRow,
      execute: () => sql`SELECT ${columns} FROM connector_watches w JOIN connectors c ON c.id = w.connector_id`
    })

    return ConnectorWatchRepo.of({
      save: (id, seconds, startedAt) =>
        (seconds === null
          ? sql`DELETE FROM connector_watches WHERE connector_id = ${id}`
          : sql`INSERT INTO connector_watches (connector_id, alert_after_seconds, started_at) VALUES (${id}, ${seconds}, ${startedAt})
                ON CONFLICT (connector_id) DO UPDATE SET alert_after_seconds = excluded.alert_after_seconds,
                  started_at = excluded.started_at, silent_since = NULL`).pipe(Effect.asVoid, Effect.orDie),
      find: (id) => find(id).pipe(Effect.map(Option.getOrUndefined), Effect.orDie),
      states: (ids) => ids.length === 0 ? Effect.succeed([]) : Effect.orDie(states(ids)),
      all: Effect.orDie(all(undefined)),
      markSilent: (w, since) =>
        ran(sql`UPDATE connector_watches w SET silent_since = ${since} FROM connectors c
                WHERE w.connector_id = ${w.connectorId} AND c.id = w.connector_id AND w.silent_since IS NULL
                  AND w.started_at = ${w.startedAt} AND c.last_seen_at IS NOT DISTINCT FROM ${w.lastSeenAt}::timestamptz
                RETURNING w.connector_id`),
      markResumed: (id, since) =>
        ran(sql`UPDATE connector_watches w SET silent_since = NULL FROM connectors c
                WHERE w.connector_id = ${id} AND c.id = w.connector_id AND w.silent_since = ${since} AND c.last_seen_at > w.silent_since
                RETURNING w.connector_id`),
      inTransaction: (effect) => sql.withTransaction(effect).pipe(Effect.catchTag("SqlError", Effect.die))
    })
  }))
}
