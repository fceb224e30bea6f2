/**
 * SQL of webhook services and their events. A service is visible to its
 * creator and to the accepted members of the family it is shared with; every
 * read is scoped by the caller in SQL, and a write by id follows a locked
 * `access` read in the same transaction (the service decides who may write).
 * Webhook tokens are stored and found by their SHA-256 hash only.
 */
import { AgentService, Event } from "@herald/api"
import type { AlertPriority, AlertState, InboundFormat, InboundTemplate, LimitReached } from "@herald/api"
import { Array as Arr, Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { MAX_SERVICES } from "../config/Limits.ts"
import { countLocked, insertWithinLimit, LockSpace } from "../db/AccountLocks.ts"
import { orMissingReference } from "../db/ForeignKeys.ts"
import type { MissingReference } from "../db/ForeignKeys.ts"
import { makeWriter, write } from "../db/UnitOfWork.ts"
import type { AlertDevice } from "../push/RetiredAlerts.ts"

/** A service with what deliveries need beyond the record: who created it, and the members of its family. */
export const ServiceRow = Schema.Struct({
  ...AgentService.fields,
  userId: Schema.String,
  familyMemberIds: Schema.Array(Schema.String),
  /** Its dead-man's switch, as a delivery needs it (watch/WatchSettings.ts): read in this same statement. */
  deliveryWatch: Schema.Struct({ watched: Schema.Boolean, silentSince: Schema.NullOr(Schema.String) })
})
export type ServiceRow = typeof ServiceRow.Type

/** A service as one caller sees it: its creator, and the caller's role in the family it is shared with (if any). */
export const AccessRow = Schema.Struct({
  ...AgentService.fields,
  userId: Schema.String,
  familyRole: Schema.NullOr(Schema.Literals(["owner", "admin", "member"]))
})
export type AccessRow = typeof AccessRow.Type

export interface NewService {
  readonly id: string
  readonly userId: string
  readonly title: string
  readonly imageUrl: string | null
  readonly url: string | null
  readonly defaultReplyWebhookId: string | null
  readonly tokenHash: string
  readonly format: InboundFormat | null
  readonly template: InboundTemplate | null
}

export interface ServicePatch {
  readonly title?: string
  readonly imageUrl?: string | null
  readonly url?: string | null
  readonly defaultReplyWebhookId?: string | null
  readonly format?: InboundFormat | null
  readonly template?: InboundTemplate | null
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
  readonly format: InboundFormat
  readonly priority: AlertPriority
  readonly alertKey: string | null
  readonly state: AlertState | null
  /** JSON text (bounded by the mapper), or null. */
  readonly payload: string | null
  /** A firing alert whose pushes a `resolved` delivery will withdraw. */
  readonly alertOpen: boolean
}

// The record's columns, and the receipt counts its status is made of.
const { deliveredCount: _, error: _error, status: _status, ...eventColumns } = Event.fields
const EventRow = Schema.Struct({
  ...eventColumns,
  // Read as text: the client would rename the keys of a jsonb value (snake_case to camelCase), and a
  // sender's payload is kept as it was sent.
  payload: Schema.NullOr(Schema.String),
  receipts: Schema.Number,
  accepted: Schema.Number,
  open: Schema.Number,
  firstError: Schema.NullOr(Schema.String)
})

/** An event's status from its push receipts (the spec leaves the set open). */
const toEvent = ({ accepted, firstError, open, payload, receipts, ...row }: typeof EventRow.Type) => {
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
    payload: payload === null ? null : JSON.parse(payload),
    status,
    deliveredCount: accepted,
    error: status === "partial" || status === "failed" ? firstError : null
  })
}

const Owned = Schema.Struct({ userId: Schema.String, id: Schema.String })

export class ServicesRepo extends Context.Service<ServicesRepo, {
  /** Inserts under the account's lock when it has fewer than `MAX_SERVICES`; else 422 `LIMIT_REACHED`. */
  readonly insert: (service: NewService) => Effect.Effect<AgentService, LimitReached | MissingReference>
  /** Services the user created or can see through a family, newest first. */
  readonly list: (userId: string) => Effect.Effect<ReadonlyArray<AgentService>>
  /**
   * One service the user can see, with its creator and the user's family role; undefined when not
   * visible. `forUpdate` locks the service row for the rest of the caller's transaction.
   */
  readonly access: (userId: string, id: string, options?: { readonly forUpdate?: boolean }) => Effect.Effect<AccessRow | undefined>
  /** The writes by id: the caller has checked `access` first. Undefined (false) when it is gone. */
  readonly update: (id: string, patch: ServicePatch) => Effect.Effect<AgentService | undefined, MissingReference>
  readonly remove: (id: string) => Effect.Effect<boolean>
  readonly setFamily: (id: string, familyId: string | null) => Effect.Effect<AgentService | undefined>
  /** Whether the account has this reply webhook (a service's default must be one of them). */
  readonly hasReplyWebhook: (userId: string, webhookId: string) => Effect.Effect<boolean>
  /** The creator's service only. */
  readonly setTokenHash: (userId: string, id: string, tokenHash: string) => Effect.Effect<AgentService | undefined>
  /** Runs `effect` in one transaction (a write, its checks and its audit entry). */
  readonly inTransaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** The service a webhook token belongs to. */
  readonly findByTokenHash: (tokenHash: string) => Effect.Effect<ServiceRow | undefined>
  /** Writes the event in the caller's unit of work, with the rows that go with it (inbox copies, push receipts). */
  readonly insertEvent: (event: NewEvent) => Effect.Effect<void>
  /**
   * A `resolved` delivery: the service's open firing events of this alert key are closed, their pushes still
   * queued dropped, and the devices that got one (the removal command goes there) answered, in one statement
   * of the caller's transaction.
   */
  readonly resolveAlert: (serviceId: string, alertKey: string) => Effect.Effect<ReadonlyArray<AlertDevice>>
  /** The user's recent events, newest first, with delivery counts from their receipts. */
  readonly events: (userId: string, limit: number) => Effect.Effect<ReadonlyArray<Event>>
}>()("herald/ServicesRepo") {
  static readonly layer = Layer.effect(ServicesRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const columns = sql`id, title, image_url, url, created_at, updated_at, family_id, default_reply_webhook_id, format, template`
    const sColumns = sql`s.id, s.title, s.image_url, s.url, s.created_at, s.updated_at, s.family_id, s.default_reply_webhook_id, s.format, s.template`
    const one = <A>(found: Effect.Effect<Option.Option<A>, unknown>) => found.pipe(Effect.map(Option.getOrUndefined), Effect.orDie)

    const insertRow = SqlSchema.findOne({
      Request: Schema.Struct({
        id: Schema.String,
        userId: Schema.String,
        title: Schema.String,
        imageUrl: Schema.NullOr(Schema.String),
        url: Schema.NullOr(Schema.String),
        defaultReplyWebhookId: Schema.NullOr(Schema.String),
        tokenHash: Schema.String,
        format: Schema.NullOr(Schema.String),
        template: Schema.NullOr(Schema.Unknown)
      }),
      Result: AgentService,
      execute: (s) => sql`INSERT INTO services ${sql.insert({ ...s, template: s.template === null ? null : JSON.stringify(s.template) })} RETURNING ${columns}`
    })
    const insert = (s: NewService) =>
      insertWithinLimit(sql, {
        count: countLocked(sql, LockSpace.services, s.userId, sql`SELECT count(*)::int AS n FROM services WHERE user_id = ${s.userId}`),
        limit: MAX_SERVICES,
        what: "webhook services"
      }, orMissingReference(insertRow(s)))

    // The account's own (at most MAX_SERVICES) and those shared with its families: each family is its
    // owner and three more, each holding at most MAX_SERVICES, so the list stays bounded.
    const list = SqlSchema.findAll({
      Request: Schema.String,
      Result: AgentService,
      execute: (userId) =>
        sql`(SELECT ${columns} FROM services WHERE user_id = ${userId} ORDER BY id DESC LIMIT ${MAX_SERVICES})
            UNION ALL
            SELECT ${sColumns} FROM services s JOIN team_members m ON m.team_id = s.family_id AND m.user_id = ${userId}
            WHERE s.user_id <> ${userId}
            ORDER BY id DESC`
    })

    const access = SqlSchema.findOneOption({
      Request: Schema.Struct({ userId: Schema.String, id: Schema.String, forUpdate: Schema.Boolean }),
      Result: AccessRow,
      execute: ({ forUpdate, id, userId }) =>
        sql`SELECT ${sColumns}, s.user_id, m.role AS family_role
            FROM services s LEFT JOIN team_members m ON m.team_id = s.family_id AND m.user_id = ${userId}
            WHERE s.id = ${id} AND (s.user_id = ${userId} OR m.user_id IS NOT NULL)${forUpdate ? sql` FOR UPDATE OF s` : sql``}`
    })

    const update = (id: string, patch: ServicePatch) => {
      // The template is jsonb: written as its JSON text.
      const row = patch.template === undefined ? { ...patch } : { ...patch, template: patch.template === null ? null : JSON.stringify(patch.template) }
      const changes = Object.keys(row).length > 0 ? sql`${sql.update(row)}, updated_at = now()` : sql`updated_at = now()`
      return orMissingReference(SqlSchema.findOneOption({
        Request: Schema.String,
        Result: AgentService,
        execute: (key) => sql`UPDATE services SET ${changes} WHERE id = ${key} RETURNING ${columns}`
      })(id)).pipe(Effect.map(Option.getOrUndefined))
    }

    const setFamily = SqlSchema.findOneOption({
      Request: Schema.Struct({ id: Schema.String, familyId: Schema.NullOr(Schema.String) }),
      Result: AgentService,
      execute: ({ familyId, id }) =>
        sql`UPDATE services SET family_id = ${familyId}, updated_at = now() WHERE id = ${id} RETURNING ${columns}`
    })

    const setTokenHash = SqlSchema.findOneOption({
      Request: Schema.Struct({ userId: Schema.String, id: Schema.String, tokenHash: Schema.String }),
      Result: AgentService,
      execute: ({ id, tokenHash, userId }) =>
        sql`UPDATE services SET token_hash = ${tokenHash}, updated_at = now()
            WHERE id = ${id} AND user_id = ${userId} RETURNING ${columns}`
    })

    const remove = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: Schema.Struct({ id: Schema.String }),
      execute: (id) => sql`DELETE FROM services WHERE id = ${id} RETURNING id`
    })

    // The family's accepted members are its `team_members` rows (pending invites are not members).
    const findByTokenHash = SqlSchema.findOneOption({
      Request: Schema.String,
      Result: ServiceRow,
      execute: (tokenHash) =>
        sql`SELECT ${sColumns}, s.user_id,
                   ARRAY(SELECT m.user_id FROM team_members m WHERE m.team_id = s.family_id ORDER BY m.joined_at, m.user_id)
                     AS family_member_ids,
                   json_build_object('watched', w.service_id IS NOT NULL, 'silentSince', w.silent_since) AS delivery_watch
            FROM services s LEFT JOIN service_watches w ON w.service_id = s.id WHERE s.token_hash = ${tokenHash}`
    })

    const eventRows = makeWriter<NewEvent>((rows) => sql`INSERT INTO events ${sql.insert(Arr.map(rows, (e) => ({ ...e })))}`)

    const events = SqlSchema.findAll({
      Request: Schema.Struct({ userId: Schema.String, limit: Schema.Number }),
      Result: EventRow,
      execute: ({ limit, userId }) =>
        sql`
          SELECT e.id, e.service_id, e.service_title, e.title, e.body, e.image_url, e.url, e.created_at,
                 e.format, e.priority, e.alert_key, e.state, e.payload::text AS payload,
                 count(r.id)::int AS receipts,
                 (count(r.id) FILTER (WHERE r.status = 'accepted'))::int AS accepted,
                 (count(r.id) FILTER (WHERE r.status IN ('pending', 'sending')))::int AS open,
                 min(r.error_code) FILTER (WHERE r.status IN ('error', 'unknown')) AS first_error
          FROM (SELECT * FROM events WHERE user_id = ${userId} ORDER BY id DESC LIMIT ${limit}) e
          LEFT JOIN push_receipts r ON r.item_id = e.id AND r.purpose = 'alert'
          GROUP BY e.id, e.service_id, e.service_title, e.title, e.body, e.image_url, e.url, e.created_at,
                   e.format, e.priority, e.alert_key, e.state, e.payload
          ORDER BY e.id DESC`
    })

    // RetiredAlerts.ts's statement, for every open firing event of the key at once.
    const resolveAlert = SqlSchema.findAll({
      Request: Schema.Struct({ serviceId: Schema.String, alertKey: Schema.String }),
      Result: Schema.Struct({ deviceId: Schema.String, userId: Schema.String }),
      execute: ({ alertKey, serviceId }) =>
        sql`
          WITH closed AS (
            UPDATE events SET alert_open = false
            WHERE service_id = ${serviceId} AND alert_key = ${alertKey} AND alert_open
            RETURNING id),
          dropped AS (
            UPDATE push_receipts SET status = 'error', error_code = 'Withdrawn', checked_at = now()
            WHERE item_id IN (SELECT id FROM closed) AND origin = 'event' AND purpose = 'alert' AND status = 'pending'
            RETURNING id),
          dequeued AS (
            DELETE FROM push_queue WHERE receipt_id IN (SELECT id FROM dropped) AND claimed_by IS NULL)
          SELECT DISTINCT r.device_id, r.user_id FROM push_receipts r JOIN devices d ON d.id = r.device_id
          WHERE r.item_id IN (SELECT id FROM closed) AND r.origin = 'event' AND r.purpose = 'alert'
            AND r.status IN ('accepted', 'sending')`
    })

    const hasReplyWebhook = SqlSchema.findOneOption({
      Request: Owned,
      Result: Schema.Struct({ id: Schema.String }),
      execute: ({ id, userId }) => sql`SELECT id FROM reply_webhooks WHERE id = ${id} AND user_id = ${userId}`
    })

    return ServicesRepo.of({
      insert,
      list: (userId) => list(userId).pipe(Effect.orDie),
      access: (userId, id, options) => one(access({ userId, id, forUpdate: options?.forUpdate === true })),
      update,
      remove: (id) => remove(id).pipe(Effect.map(Option.isSome), Effect.orDie),
      setFamily: (id, familyId) => one(setFamily({ id, familyId })),
      hasReplyWebhook: (userId, id) => hasReplyWebhook({ userId, id }).pipe(Effect.map(Option.isSome), Effect.orDie),
      inTransaction: (effect) => sql.withTransaction(effect).pipe(Effect.catchTag("SqlError", Effect.die)),
      setTokenHash: (userId, id, tokenHash) => one(setTokenHash({ userId, id, tokenHash })),
      findByTokenHash: (tokenHash) => one(findByTokenHash(tokenHash)),
      insertEvent: (event) => write(eventRows, [event]),
      resolveAlert: (serviceId, alertKey) => Effect.orDie(resolveAlert({ serviceId, alertKey })),
      events: (userId, limit) => events({ userId, limit }).pipe(Effect.map((rows) => rows.map(toEvent)), Effect.orDie)
    })
  }))
}
