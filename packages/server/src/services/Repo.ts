/**
 * SQL of webhook services and their events. A service is visible to its
 * creator (and, once teams exist, to members of the family it is shared
 * with); every query is scoped by the caller in SQL. Webhook tokens are
 * stored and found by their SHA-256 hash only.
 */
import { AgentService, Event } from "@herald/api"
import type { LimitReached } from "@herald/api"
import { Array as Arr, Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { MAX_SERVICES } from "../config/Limits.ts"
import { insertWithinLimit, lockAccount, LockSpace } from "../db/AccountLocks.ts"
import { orMissingReference } from "../db/ForeignKeys.ts"
import type { MissingReference } from "../db/ForeignKeys.ts"
import { makeWriter, write } from "../db/UnitOfWork.ts"

/** A service with what deliveries need beyond the record: who created it. */
export const ServiceRow = Schema.Struct({ ...AgentService.fields, userId: Schema.String })
export type ServiceRow = typeof ServiceRow.Type

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

// The record's columns, and the receipt counts its status is made of.
const { deliveredCount: _, error: _error, status: _status, ...eventColumns } = Event.fields
const EventRow = Schema.Struct({
  ...eventColumns,
  receipts: Schema.Number,
  accepted: Schema.Number,
  open: Schema.Number,
  firstError: Schema.NullOr(Schema.String)
})

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
  })
}

const Owned = Schema.Struct({ userId: Schema.String, id: Schema.String })

export class ServicesRepo extends Context.Service<ServicesRepo, {
  /** Inserts under the account's lock when it has fewer than `MAX_SERVICES`; else 422 `LIMIT_REACHED`. */
  readonly insert: (service: NewService) => Effect.Effect<AgentService, LimitReached | MissingReference>
  /** Services the user can see, newest first. */
  readonly list: (userId: string) => Effect.Effect<ReadonlyArray<AgentService>>
  /** One service the user can see. */
  readonly find: (userId: string, id: string) => Effect.Effect<AgentService | undefined>
  /** The writes below touch the creator's service only; undefined (false) when it is gone. */
  readonly update: (userId: string, id: string, patch: ServicePatch) => Effect.Effect<AgentService | undefined, MissingReference>
  readonly remove: (userId: string, id: string) => Effect.Effect<boolean>
  /** Whether the account has this reply webhook (a service's default must be one of them). */
  readonly hasReplyWebhook: (userId: string, webhookId: string) => Effect.Effect<boolean>
  readonly setFamily: (userId: string, id: string, familyId: string | null) => Effect.Effect<AgentService | undefined>
  readonly setTokenHash: (userId: string, id: string, tokenHash: string) => Effect.Effect<AgentService | undefined>
  /** The service a webhook token belongs to. */
  readonly findByTokenHash: (tokenHash: string) => Effect.Effect<ServiceRow | undefined>
  /** Writes the event in the caller's unit of work, with the rows that go with it (inbox copies, push receipts). */
  readonly insertEvent: (event: NewEvent) => Effect.Effect<void>
  /** The user's recent events, newest first, with delivery counts from their receipts. */
  readonly events: (userId: string, limit: number) => Effect.Effect<ReadonlyArray<Event>>
}>()("herald/ServicesRepo") {
  static readonly layer = Layer.effect(ServicesRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = sql`id, title, image_url, url, created_at, updated_at, family_id, default_reply_webhook_id`
    const one = <A>(found: Effect.Effect<Option.Option<A>, unknown>) => found.pipe(Effect.map(Option.getOrUndefined), Effect.orDie)

    const countLocked = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ n: Schema.Number }),
      execute: (userId) =>
        lockAccount(sql, LockSpace.services, userId).pipe(
          Effect.andThen(sql`SELECT count(*)::int AS n FROM services WHERE user_id = ${userId}`)
        )
    })
    const insertRow = SqlSchema.findOne({
      Request: Schema.Struct({
        id: Schema.String,
        userId: Schema.String,
        title: Schema.String,
        imageUrl: Schema.NullOr(Schema.String),
        url: Schema.NullOr(Schema.String),
        defaultReplyWebhookId: Schema.NullOr(Schema.String),
        tokenHash: Schema.String
      }),
      Result: AgentService,
      execute: (s) => sql`INSERT INTO services ${sql.insert(s)} RETURNING ${columns}`
    })
    const insert = (s: NewService) =>
      insertWithinLimit(sql, {
        count: countLocked(s.userId).pipe(Effect.map((row) => row.n), Effect.orDie),
        limit: MAX_SERVICES,
        what: "webhook services"
      }, orMissingReference(insertRow(s)))

    const list = SqlSchema.findAll({
      Request: Schema.String,
      Result: AgentService,
      execute: (userId) => sql`SELECT ${columns} FROM services WHERE user_id = ${userId} ORDER BY id DESC LIMIT ${MAX_SERVICES}`
    })

    const find = SqlSchema.findOneOption({
      Request: Owned,
      Result: AgentService,
      execute: ({ id, userId }) => sql`SELECT ${columns} FROM services WHERE id = ${id} AND user_id = ${userId}`
    })

    const update = (userId: string, id: string, patch: ServicePatch) => {
      const changes = Object.keys(patch).length > 0 ? sql`${sql.update({ ...patch })}, updated_at = now()` : sql`updated_at = now()`
      return orMissingReference(SqlSchema.findOneOption({
        Request: Owned,
        Result: AgentService,
        execute: (key) => sql`UPDATE services SET ${changes} WHERE id = ${key.id} AND user_id = ${key.userId} RETURNING ${columns}`
      })({ userId, id })).pipe(Effect.map(Option.getOrUndefined))
    }

    const setFamily = SqlSchema.findOneOption({
      Request: Schema.Struct({ userId: Schema.String, id: Schema.String, familyId: Schema.NullOr(Schema.String) }),
      Result: AgentService,
      execute: ({ familyId, id, userId }) =>
        sql`UPDATE services SET family_id = ${familyId}, updated_at = now()
            WHERE id = ${id} AND user_id = ${userId} RETURNING ${columns}`
    })

    const setTokenHash = SqlSchema.findOneOption({
      Request: Schema.Struct({ userId: Schema.String, id: Schema.String, tokenHash: Schema.String }),
      Result: AgentService,
      execute: ({ id, tokenHash, userId }) =>
        sql`UPDATE services SET token_hash = ${tokenHash}, updated_at = now()
            WHERE id = ${id} AND user_id = ${userId} RETURNING ${columns}`
    })

    const remove = SqlSchema.findOneOption({
      Request: Owned,
      Result: Schema.Struct({ id: Schema.String }),
      execute: ({ id, userId }) => sql`DELETE FROM services WHERE id = ${id} AND user_id = ${userId} RETURNING id`
    })

    const findByTokenHash = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: ServiceRow,
      execute: (tokenHash) => sql`SELECT ${columns}, user_id FROM services WHERE token_hash = ${tokenHash}`
    })

    const eventRows = makeWriter<NewEvent>((rows) => sql`INSERT INTO events ${sql.insert(Arr.map(rows, (e) => ({ ...e })))}`)

    const events = SqlSchema.findAll({
      Request: Schema.Struct({ userId: Schema.String, limit: Schema.Number }),
      Result: EventRow,
      execute: ({ limit, userId }) =>
        sql`
          SELECT e.id, e.service_id, e.service_title, e.title, e.body, e.image_url, e.url, e.created_at,
                 count(r.id)::int AS receipts,
                 (count(r.id) FILTER (WHERE r.status = 'accepted'))::int AS accepted,
                 (count(r.id) FILTER (WHERE r.status IN ('pending', 'sending')))::int AS open,
                 min(r.error_code) FILTER (WHERE r.status IN ('error', 'unknown')) AS first_error
          FROM (SELECT * FROM events WHERE user_id = ${userId} ORDER BY id DESC LIMIT ${limit}) e
          LEFT JOIN push_receipts r ON r.item_id = e.id AND r.purpose = 'alert'
          GROUP BY e.id, e.service_id, e.service_title, e.title, e.body, e.image_url, e.url, e.created_at
          ORDER BY e.id DESC`
    })

    const hasReplyWebhook = SqlSchema.findOneOption({
      Request: Owned,
      Result: Schema.Struct({ id: Schema.String }),
      execute: ({ id, userId }) => sql`SELECT id FROM reply_webhooks WHERE id = ${id} AND user_id = ${userId}`
    })

    return ServicesRepo.of({
      insert,
      list: (userId) => list(userId).pipe(Effect.orDie),
      find: (userId, id) => one(find({ userId, id })),
      update,
      remove: (userId, id) => remove({ userId, id }).pipe(Effect.map(Option.isSome), Effect.orDie),
      hasReplyWebhook: (userId, id) => hasReplyWebhook({ userId, id }).pipe(Effect.map(Option.isSome), Effect.orDie),
      setFamily: (userId, id, familyId) => one(setFamily({ userId, id, familyId })),
      setTokenHash: (userId, id, tokenHash) => one(setTokenHash({ userId, id, tokenHash })),
      findByTokenHash: (tokenHash) => one(findByTokenHash(tokenHash)),
      insertEvent: (event) => write(eventRows, [event]),
      events: (userId, limit) => events({ userId, limit }).pipe(Effect.map((rows) => rows.map(toEvent)), Effect.orDie)
    })
  }))
}
