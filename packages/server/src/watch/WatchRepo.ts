/**
 * The SQL of the dead-man's switch (`service_watches`, migration 0027). Every
 * move of a watch's state is one conditional update, so a deadline delivered
 * twice moves it once: silent only from the state the alert was decided on
 * (no delivery since), resumed only from the silence it ends.
 */
import type { ServiceWatchSettings } from "@herald/api"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import type { Statement } from "effect/sql"
import { makeWriter, write } from "../db/UnitOfWork.ts"

/** The settings and state of a watch, as the service record shows them. */
export const WatchState = Schema.Struct({
  serviceId: Schema.String,
  expectEverySeconds: Schema.Number,
  graceSeconds: Schema.Number,
  alertGroupId: Schema.NullOr(Schema.String),
  startedAt: Schema.String,
  lastDeliveryAt: Schema.NullOr(Schema.String),
  silentSince: Schema.NullOr(Schema.String),
  pageId: Schema.NullOr(Schema.String)
})
export type WatchState = typeof WatchState.Type

/** A watch with what its alert needs: the service's title, creator and family members. */
export const WatchRow = Schema.Struct({
  ...WatchState.fields,
  title: Schema.String,
  userId: Schema.String,
  familyMemberIds: Schema.Array(Schema.String)
})
export type WatchRow = typeof WatchRow.Type

/** When the alert is due: the last delivery (or the watch's start, if later) + period + grace, in epoch ms. */
export const dueOf = (w: Pick<WatchState, "startedAt" | "lastDeliveryAt" | "expectEverySeconds" | "graceSeconds">) =>
  baseOf(w) + (w.expectEverySeconds + w.graceSeconds) * 1000

/** What silence is counted from: the last delivery, or the watch's start when that is later. */
export const baseOf = (w: Pick<WatchState, "startedAt" | "lastDeliveryAt">) =>
  Math.max(Date.parse(w.startedAt), w.lastDeliveryAt === null ? 0 : Date.parse(w.lastDeliveryAt))

interface Delivered {
  readonly serviceId: string
  readonly at: string
}

export class WatchRepo extends Context.Service<WatchRepo, {
  /** Saves (replacing) or, given null, removes the service's watch; a saved watch restarts at `startedAt`. */
  readonly save: (serviceId: string, settings: (ServiceWatchSettings & { readonly graceSeconds: number }) | null, startedAt: string) => Effect.Effect<void>
  readonly find: (serviceId: string) => Effect.Effect<WatchRow | undefined>
  /** The watches of these services (those that have one). */
  readonly states: (serviceIds: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<WatchState>>
  /** Every watch (start-up re-arm): bounded by the services there are, MAX_SERVICES per account. */
  readonly all: Effect.Effect<ReadonlyArray<WatchState>>
  /** Records a delivery in the caller's unit of work (one more member of the statement the delivery runs). */
  readonly delivered: (serviceId: string, at: string) => Effect.Effect<void>
  /** Silent since `since`, when still as read (same start, no later delivery, not silent): whether it moved. */
  readonly markSilent: (w: WatchRow, since: string) => Effect.Effect<boolean>
  /** Ends the silence `since` when a delivery came after it: whether it moved. */
  readonly markResumed: (serviceId: string, since: string) => Effect.Effect<boolean>
  /** The page raised for the silence `since` (first one wins). */
  readonly setPage: (serviceId: string, since: string, pageId: string) => Effect.Effect<void>
  readonly inTransaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}>()("herald/WatchRepo") {
  static readonly layer = Layer.effect(WatchRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const stateColumns = sql`w.service_id, w.expect_every_seconds, w.grace_seconds, w.alert_group_id, w.started_at,
                             w.last_delivery_at, w.silent_since, w.page_id`

    const upsert = (serviceId: string, s: ServiceWatchSettings & { readonly graceSeconds: number }, startedAt: string) =>
      sql`INSERT INTO service_watches (service_id, expect_every_seconds, grace_seconds, alert_group_id, started_at)
          VALUES (${serviceId}, ${s.expectEverySeconds}, ${s.graceSeconds}, ${s.alertGroupId ?? null}, ${startedAt})
          ON CONFLICT (service_id) DO UPDATE SET expect_every_seconds = excluded.expect_every_seconds,
            grace_seconds = excluded.grace_seconds, alert_group_id = excluded.alert_group_id,
            started_at = excluded.started_at, silent_since = NULL, page_id = NULL`

    const find = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: WatchRow,
      execute: (serviceId) =>
        sql`SELECT ${stateColumns}, s.title, s.user_id,
                   ARRAY(SELECT m.user_id FROM team_members m WHERE m.team_id = s.family_id ORDER BY m.joined_at, m.user_id)
                     AS family_member_ids
            FROM service_watches w JOIN services s ON s.id = w.service_id WHERE w.service_id = ${serviceId}`
    })

    const states = SqlSchema.findAll({
      Request: Schema.Array(Schema.String),
      Result: WatchState,
      execute: (ids) => sql`SELECT ${stateColumns} FROM service_watches w WHERE w.service_id = ANY(${ids}::text[])`
    })
    const all = SqlSchema.findAll({
      Request: Schema.Void,
      Result: WatchState,
      execute: () => sql`SELECT ${stateColumns} FROM service_watches w`
    })

    // Several deliveries to one service in one group commit: the latest counts (an UPDATE … FROM would pick any).
    const deliveries = makeWriter<Delivered>((rows) => {
      const latest = new Map<string, string>()
      for (const r of rows) {
        const seen = latest.get(r.serviceId)
        if (seen === undefined || Date.parse(r.at) > Date.parse(seen)) latest.set(r.serviceId, r.at)
      }
      return sql`UPDATE service_watches w SET last_delivery_at = GREATEST(w.last_delivery_at, v.at)
                 FROM unnest(${[...latest.keys()]}::text[], ${[...latest.values()]}::timestamptz[]) AS v(service_id, at)
                 WHERE w.service_id = v.service_id`
    })

    // A conditional update: whether it found its row in the state it moves from (only the count is read).
    const ran = (statement: Statement.Statement<unknown>) =>
      statement.pipe(Effect.map((rows) => rows.length > 0), Effect.orDie)

    return WatchRepo.of({
      save: (serviceId, settings, startedAt) =>
        (settings === null ? sql`DELETE FROM service_watches WHERE service_id = ${serviceId}` : upsert(serviceId, settings, startedAt)).pipe(
          Effect.asVoid,
          Effect.orDie
        ),
      find: (serviceId) => find(serviceId).pipe(Effect.map(Option.getOrUndefined), Effect.orDie),
      states: (ids) => ids.length === 0 ? Effect.succeed([]) : Effect.orDie(states(ids)),
      all: Effect.orDie(all(undefined)),
      delivered: (serviceId, at) => write(deliveries, [{ serviceId, at }]),
      markSilent: (w, since) =>
        ran(sql`UPDATE service_watches SET silent_since = ${since}
                WHERE service_id = ${w.serviceId} AND silent_since IS NULL AND started_at = ${w.startedAt}
                  AND last_delivery_at IS NOT DISTINCT FROM ${w.lastDeliveryAt}::timestamptz
                RETURNING service_id`),
      markResumed: (serviceId, since) =>
        ran(sql`UPDATE service_watches SET silent_since = NULL, page_id = NULL
                WHERE service_id = ${serviceId} AND silent_since = ${since} AND last_delivery_at > silent_since
                RETURNING service_id`),
      setPage: (serviceId, since, pageId) =>
        sql`UPDATE service_watches SET page_id = ${pageId} WHERE service_id = ${serviceId} AND silent_since = ${since} AND page_id IS NULL`.pipe(
          Effect.asVoid,
          Effect.orDie
        ),
      inTransaction: (effect) => sql.withTransaction(effect).pipe(Effect.catchTag("SqlError", Effect.die))
    })
  }))
}
