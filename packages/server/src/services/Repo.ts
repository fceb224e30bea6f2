/**
 * SQL of webhook services and their events. A service is visible to its
 * creator (and, once teams exist, to members of the family it is shared
 * with); every query is scoped by the caller in SQL. Webhook tokens are
 * stored and found by their SHA-256 hash only.
 */
import { AgentService, Event } from "@herald/api"
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import type { Statement } from "effect/sql"
import { MAX_SERVICES } from "../config/Limits.ts"
import { lockAccount, LockSpace } from "../db/AccountLocks.ts"
import { alongsideMembers } from "../db/Statements.ts"

/** A service with what the rules need beyond the record: who created it. */
export const ServiceRow = Schema.Struct({
  id: Schema.String,
  userId: Schema.String,
  title: Schema.String,
  imageUrl: Schema.NullOr(Schema.String),
  url: Schema.NullOr(Schema.String),
  createdAt: Schema.String,
  updatedAt: Schema.String,
  familyId: Schema.NullOr(Schema.String),
  defaultReplyWebhookId: Schema.NullOr(Schema.String)
})
export type ServiceRow = typeof ServiceRow.Type
const decodeServices = Schema.decodeUnknownSync(Schema.Array(ServiceRow))

export const toService = ({ userId: _, ...row }: ServiceRow) => new AgentService(row, { disableChecks: true })

export interface NewService {
  readonly id: string
  readonly userId: string
  readonly title: string
  readonly imageUrl: string | null
  readonly url: string | null
  readonly defaultReplyWebhookId: string | null
  readonly tokenHash: string
}

export interface ServicePatch {
  readonly title?: string
  readonly imageUrl?: string | null
  readonly url?: string | null
  readonly defaultReplyWebhookId?: string | null
}

export interface NewEvent {
  readonly id: string
  readonly userId: string
  readonly serviceId: string
  readonly serviceTitle: string
  readonly title: string | null
  readonly body: string
  readonly imageUrl: string | null
  readonly url: string | null
  /** The same instant as its inbox copies. */
  readonly createdAt: string
}

const EventRow = Schema.Struct({
  id: Schema.String,
  serviceId: Schema.String,
  serviceTitle: Schema.String,
  title: Schema.NullOr(Schema.String),
  body: Schema.String,
  imageUrl: Schema.NullOr(Schema.String),
  url: Schema.NullOr(Schema.String),
  createdAt: Schema.String,
  receipts: Schema.Number,
  accepted: Schema.Number,
  open: Schema.Number,
  firstError: Schema.NullOr(Schema.String)
})
const decodeEvents = Schema.decodeUnknownSync(Schema.Array(EventRow))

/** An event's status from its push receipts (the spec leaves the set open). */
const toEvent = ({ accepted, firstError, open, receipts, ...row }: typeof EventRow.Type) => {
  const status = receipts === 0
    ? "no_devices"
    : open > 0
    ? "queued"
    : accepted === receipts
    ? "delivered"
    : accepted > 0
    ? "partial"
    : "failed"
  return new Event({
    ...row,
    status,
    deliveredCount: accepted,
    error: status === "partial" || status === "failed" ? firstError : null
  }, { disableChecks: true })
}

export class ServicesRepo extends Context.Service<ServicesRepo, {
  readonly insert: (service: NewService) => Effect.Effect<ServiceRow>
  /** Services the user can see, newest first. */
  readonly list: (userId: string) => Effect.Effect<ReadonlyArray<ServiceRow>>
  /** How many services the account created, under the account's lock (in the caller's transaction, before its insert). */
  readonly lockAndCount: (userId: string) => Effect.Effect<number>
  /** One service the user can see. */
  readonly find: (userId: string, id: string) => Effect.Effect<ServiceRow | undefined>
  /** The writes below touch the creator's service only; undefined (false) when it is gone. */
  readonly update: (userId: string, id: string, patch: ServicePatch) => Effect.Effect<ServiceRow | undefined>
  readonly remove: (userId: string, id: string) => Effect.Effect<boolean>
  /** Whether the account has this reply webhook (a service's default must be one of them). */
  readonly hasReplyWebhook: (userId: string, webhookId: string) => Effect.Effect<boolean>
  readonly setFamily: (userId: string, id: string, familyId: string | null) => Effect.Effect<ServiceRow | undefined>
  readonly setTokenHash: (userId: string, id: string, tokenHash: string) => Effect.Effect<ServiceRow | undefined>
  /** The service a webhook token belongs to. */
  readonly findByTokenHash: (tokenHash: string) => Effect.Effect<ServiceRow | undefined>
  /** Active devices of the people a service's deliveries go to. */
  readonly recipientDevices: (userIds: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<{ readonly id: string; readonly userId: string }>>
  /** Inserts the event and, in the same statement, the rows that go with it (inbox copies, push receipts). */
  readonly insertEvent: (event: NewEvent, alongside: ReadonlyArray<Statement.Statement<unknown>>) => Effect.Effect<void>
  /** The user's recent events, newest first, with delivery counts from their receipts. */
  readonly events: (userId: string, limit: number) => Effect.Effect<ReadonlyArray<Event>>
}>()("herald/ServicesRepo") {
  static readonly layer = Layer.effect(ServicesRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = sql`id, user_id, title, image_url, url, created_at, updated_at, family_id, default_reply_webhook_id`
    const one = (rows: ReadonlyArray<unknown>) => decodeServices(rows)[0]

    const insert = (s: NewService) =>
      sql`INSERT INTO services ${sql.insert({ ...s })} RETURNING ${columns}`.pipe(Effect.map((rows) => one(rows)!), Effect.orDie)

    const list = (userId: string) =>
      sql`SELECT ${columns} FROM services WHERE user_id = ${userId} ORDER BY id DESC LIMIT ${MAX_SERVICES}`.pipe(
        Effect.map(decodeServices),
        Effect.orDie
      )

    const find = (userId: string, id: string) =>
      sql`SELECT ${columns} FROM services WHERE id = ${id} AND user_id = ${userId}`.pipe(
        Effect.map((rows) => decodeServices(rows)[0]),
        Effect.orDie
      )

    const update = (userId: string, id: string, patch: ServicePatch) => {
      const changes = Object.keys(patch).length > 0 ? sql`${sql.update({ ...patch })}, updated_at = now()` : sql`updated_at = now()`
      return sql`UPDATE services SET ${changes} WHERE id = ${id} AND user_id = ${userId} RETURNING ${columns}`.pipe(
        Effect.map(one),
        Effect.orDie
      )
    }

    const setFamily = (userId: string, id: string, familyId: string | null) =>
      sql`UPDATE services SET family_id = ${familyId}, updated_at = now()
          WHERE id = ${id} AND user_id = ${userId} RETURNING ${columns}`.pipe(Effect.map(one), Effect.orDie)

    const setTokenHash = (userId: string, id: string, tokenHash: string) =>
      sql`UPDATE services SET token_hash = ${tokenHash}, updated_at = now()
          WHERE id = ${id} AND user_id = ${userId} RETURNING ${columns}`.pipe(Effect.map(one), Effect.orDie)

    const remove = (userId: string, id: string) =>
      sql`DELETE FROM services WHERE id = ${id} AND user_id = ${userId} RETURNING id`.pipe(
        Effect.map((rows) => rows.length > 0),
        Effect.orDie
      )

    const findByTokenHash = (tokenHash: string) =>
      sql`SELECT ${columns} FROM services WHERE token_hash = ${tokenHash}`.pipe(
        Effect.map((rows) => decodeServices(rows)[0]),
        Effect.orDie
      )

    const decodeDevices = Schema.decodeUnknownSync(Schema.Array(Schema.Struct({ id: Schema.String, userId: Schema.String })))
    const recipientDevices = (userIds: ReadonlyArray<string>) =>
      sql`SELECT id, user_id FROM devices WHERE user_id = ANY(${userIds}::text[]) AND active ORDER BY created_at, id`.pipe(
        Effect.map(decodeDevices),
        Effect.orDie
      )

    const insertEvent = (event: NewEvent, alongside: ReadonlyArray<Statement.Statement<unknown>>) =>
      sql`
        WITH e AS (INSERT INTO events ${sql.insert({ ...event })} RETURNING id)
        ${alongsideMembers(sql, alongside)}
        SELECT id FROM e`.pipe(Effect.asVoid, Effect.orDie)

    const events = (userId: string, limit: number) =>
      sql`
        SELECT e.id, e.service_id, e.service_title, e.title, e.body, e.image_url, e.url, e.created_at,
               count(r.id)::int AS receipts,
               (count(r.id) FILTER (WHERE r.status = 'accepted'))::int AS accepted,
               (count(r.id) FILTER (WHERE r.status IN ('pending', 'sending')))::int AS open,
               min(r.error_code) FILTER (WHERE r.status IN ('error', 'unknown')) AS first_error
        FROM (SELECT * FROM events WHERE user_id = ${userId} ORDER BY id DESC LIMIT ${limit}) e
        LEFT JOIN push_receipts r ON r.item_id = e.id AND r.purpose = 'alert'
        GROUP BY e.id, e.service_id, e.service_title, e.title, e.body, e.image_url, e.url, e.created_at
        ORDER BY e.id DESC`.pipe(Effect.map((rows) => decodeEvents(rows).map(toEvent)), Effect.orDie)

    const hasReplyWebhook = (userId: string, webhookId: string) =>
      sql`SELECT 1 FROM reply_webhooks WHERE id = ${webhookId} AND user_id = ${userId}`.pipe(
        Effect.map((rows) => rows.length > 0),
        Effect.orDie
      )

    const lockAndCount = (userId: string) =>
      lockAccount(sql, LockSpace.services, userId).pipe(
        Effect.andThen(sql<{ n: number }>`SELECT count(*)::int AS n FROM services WHERE user_id = ${userId}`),
        Effect.map((rows) => rows[0]!.n),
        Effect.orDie
      )

    return ServicesRepo.of({
      hasReplyWebhook,
      insert,
      list,
      lockAndCount,
      find,
      update,
      remove,
      setFamily,
      setTokenHash,
      findByTokenHash,
      recipientDevices,
      insertEvent,
      events
    })
  }))
}
