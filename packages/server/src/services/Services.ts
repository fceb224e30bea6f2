/**
 * The webhook-service capability's rules: services an agent creates, their
 * webhook URLs (a 256-bit `hlw_…` token, stored as a hash, shown once), the
 * sharing rules of the spec's table, and inbound deliveries: each becomes an
 * Event, an inbox copy per recipient and a durable push per device.
 *
 * Sharing (spec, POST /services/{id}/share): a service shared with a family
 * is visible to the family's members (never its token). Only the creator
 * shares, unshares or rotates; the family's owner may also rename or delete
 * it; other members read only. Who can see a service but not do an
 * operation gets 403 `FORBIDDEN`; who cannot see it, 404. Deliveries go to
 * the creator and every member, each with an own inbox copy. GET /events
 * stays the creator's: an Event's status counts every recipient's devices,
 * and a member has their inbox copy. A change to a shared service is one
 * entry in the family's audit log, written in the change's transaction.
 */
import {
  AgentService,
  AgentServiceWithWebhookUrl,
  EventList,
  Forbidden,
  NotFound,
  ServiceCreated,
  UnsupportedMediaType,
  ValidationFailed
} from "@herald/api"
import type { LimitReached } from "@herald/api"
import type { CreateServiceRequest, UpdateServiceRequest } from "@herald/api"
import { Clock, Context, Data, Effect, Layer } from "effect"
import { generateSecret, hashSecret } from "../auth/Secrets.ts"
import { RateLimiter } from "../billing/RateLimiter.ts"
import type { Decision } from "../billing/RateLimiter.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { UnitOfWork } from "../db/UnitOfWork.ts"
import { DeviceTargeting } from "../identity/DeviceTargeting.ts"
import { InboxWrites, previewOf } from "../inbox/InboxWrites.ts"
import { makeId } from "../lib/Ids.ts"
import { alertMessage, withdrawMessage } from "../push/Alerts.ts"
import { Outbox } from "../push/Outbox.ts"
import { AuditTrail } from "../teams/AuditTrail.ts"
import type { AuditActor } from "../teams/AuditTrail.ts"
import { Membership } from "../teams/Membership.ts"
import { ServicesRepo } from "./ServicesRepo.ts"
import type { AccessRow } from "./ServicesRepo.ts"
import { alertCollapseId } from "./inbound/AlertIdentity.ts"
import type { InboundRequest } from "./inbound/Inbound.ts"
import { Refusal } from "./inbound/Inbound.ts"
import { mapDelivery } from "./inbound/Mapping.ts"
import { WatchSettings } from "../watch/WatchSettings.ts"

const notFound = new NotFound({ error: "Service not found." })
// A workplace team is not a family: the same 404 as a family the caller is not in.
const familyNotFound = new NotFound({ error: "Family not found." })
const creatorOnly = (what: string) => new Forbidden({ error: `Only the service's creator may ${what}.` })
const ownerOrCreator = new Forbidden({ error: "Only the service's creator or the family's owner may change or delete it." })

/** An inbound delivery over its service's send budget (the per-token send limit, counted per service). */
export class DeliveryThrottled extends Data.TaggedError("DeliveryThrottled")<{ readonly decision: Decision }> {}

export class Services extends Context.Service<Services, {
  readonly list: (userId: string) => Effect.Effect<ReadonlyArray<AgentService>>
  readonly create: (userId: string, input: CreateServiceRequest) => Effect.Effect<ServiceCreated, NotFound | LimitReached>
  readonly get: (userId: string, id: string) => Effect.Effect<AgentService, NotFound>
  /** The writes act as the request's agent (the audit entry names it and its token). */
  /** `actor` is who the family's audit entry names (the handler's `agentActor`). */
  readonly update: (actor: AuditActor, userId: string, id: string, input: UpdateServiceRequest) => Effect.Effect<AgentService, NotFound | Forbidden>
  readonly remove: (actor: AuditActor, userId: string, id: string) => Effect.Effect<void, NotFound | Forbidden>
  readonly share: (actor: AuditActor, userId: string, id: string, familyId: string | null) => Effect.Effect<AgentService, NotFound | Forbidden>
  readonly rotate: (userId: string, id: string) => Effect.Effect<ServiceCreated, NotFound | Forbidden>
  /** An inbound delivery to the service whose webhook token this is, read by its format (inbound/Mapping.ts). */
  readonly deliver: (token: string, request: InboundRequest) => Effect.Effect<
    { readonly eventId: string; readonly rateLimit: Decision | undefined },
    NotFound | DeliveryThrottled | ValidationFailed | UnsupportedMediaType
  >
  readonly events: (userId: string, limit: number) => Effect.Effect<EventList>
}>()("herald/Services") {
  static readonly layerNoDeps = Layer.effect(Services, Effect.gen(function*() {
    const repo = yield* ServicesRepo
    const outbox = yield* Outbox
    const inbox = yield* InboxWrites
    const targeting = yield* DeviceTargeting
    const unit = yield* UnitOfWork
    const limiter = yield* RateLimiter
    const membership = yield* Membership
    const audit = yield* AuditTrail
    const { publicUrl } = yield* AppConfig
    const watches = yield* WatchSettings

    // A service's default reply webhook must be one of the account's, like any id a body names. One
    // deleted between this check and the write breaks the foreign key: the same 404 (db/ForeignKeys.ts).
    const replyWebhookNotFound = new NotFound({ error: "Reply webhook not found." })
    const checkReplyWebhook = (userId: string, id: string | null | undefined) =>
      id === undefined || id === null
        ? Effect.void
        : Effect.flatMap(repo.hasReplyWebhook(userId, id), (has) => has ? Effect.void : Effect.fail(replyWebhookNotFound))

    const webhookUrl = (token: string) => `${publicUrl}/hooks/${token}`
    const created = (service: AgentService, token: string) =>
      new ServiceCreated({
        service: new AgentServiceWithWebhookUrl({ ...service, webhookUrl: webhookUrl(token) }),
        webhookUrl: webhookUrl(token)
      })

    // Visible services only; one neither created nor shared with the caller answers 404 like a missing one.
    const access = (userId: string, id: string, options?: { readonly forUpdate?: boolean }) =>
      Effect.flatMap(repo.access(userId, id, options), (row) => row === undefined ? Effect.fail(notFound) : Effect.succeed(row))
    const recordOf = ({ familyRole: _role, userId: _creator, ...service }: AccessRow) => new AgentService(service)

    const create = Effect.fn("Services.create")(function*(userId: string, input: CreateServiceRequest) {
      yield* checkReplyWebhook(userId, input.defaultReplyWebhookId)
      yield* watches.check(userId, input.watch)
      const token = generateSecret("hlw")
      const id = yield* makeId("svc")
      // The service and its watch (docs/dead-mans-switch.md) commit together; the watch's timer after.
      const row = yield* repo.inTransaction(Effect.tap(repo.insert({
        id,
        userId,
        title: input.title,
        imageUrl: input.imageUrl ?? null,
        url: input.url ?? null,
        defaultReplyWebhookId: input.defaultReplyWebhookId ?? null,
        tokenHash: hashSecret(token),
        format: input.format ?? null,
        template: input.template ?? null
      }), () => input.watch == null ? Effect.void : watches.save(id, input.watch))).pipe(
        Effect.catchTag("MissingReference", () => Effect.fail(replyWebhookNotFound))
      )
      if (input.watch != null) yield* watches.arm(id)
      return created(row, token)
    })

    // A write finds no row when the service went away meanwhile: 404 too.
    const found = (row: AgentService | undefined) => row === undefined ? Effect.fail(notFound) : Effect.succeed(row)

    /**
     * Inside a change's transaction, the caller's membership rows of these families, then (by the
     * caller) the service row: the order a leave, an ownership transfer or a family's deletion takes
     * its locks in, so none deadlocks with this change, and a role read after it is the role at commit.
     */
    const holdMemberships = (userId: string, familyIds: ReadonlyArray<string | null>) =>
      Effect.forEach([...new Set(familyIds.filter((f) => f !== null))].sort(), (familyId) =>
        membership.standing(userId, familyId, { forUpdate: true }), { discard: true })

    /** The service locked for a change by its creator or, when shared, the family's owner; another member: 403. */
    const changeable = (userId: string, id: string) =>
      Effect.gen(function*() {
        yield* holdMemberships(userId, [(yield* access(userId, id)).familyId])
        const row = yield* access(userId, id, { forUpdate: true })
        return row.userId === userId || row.familyRole === "owner" ? row : yield* ownerOrCreator
      })

    /** A change to a shared service is an entry in its family's log. */
    const recordChange = (
      actor: AuditActor,
      familyId: string | null,
      serviceId: string,
      action: string,
      metadata: Record<string, unknown>
    ) =>
      familyId === null
        ? Effect.void
        : audit.record(actor, { teamId: familyId, action, targetType: "service", targetId: serviceId, metadata })

    const update = Effect.fn("Services.update")(function*(actor: AuditActor, userId: string, id: string, input: UpdateServiceRequest) {
      return yield* repo.inTransaction(Effect.gen(function*() {
        const row = yield* changeable(userId, id)
        // The reply webhook is the creator's: a family owner renames, it does not reroute outcomes.
        if (input.defaultReplyWebhookId !== undefined && row.userId !== userId) return yield* creatorOnly("set its reply webhook")
        yield* checkReplyWebhook(userId, input.defaultReplyWebhookId)
        const { watch, ...fields } = input
        if (watch !== undefined) {
          if (row.userId !== userId) return yield* creatorOnly("set its watch")
          yield* watches.check(userId, watch)
          yield* watches.save(id, watch)
        }
        const updated = yield* Effect.flatMap(repo.update(id, fields), found)
        yield* recordChange(actor, row.familyId, id, "service.updated", { fields: Object.keys(input), title: updated.title })
        return updated
      })).pipe(
        Effect.catchTag("MissingReference", () => Effect.fail(replyWebhookNotFound)),
        Effect.tap(() => input.watch === undefined ? Effect.void : watches.arm(id))
      )
    })

    const remove = Effect.fn("Services.remove")(function*(actor: AuditActor, userId: string, id: string) {
      yield* repo.inTransaction(Effect.gen(function*() {
        const row = yield* changeable(userId, id)
        if (!(yield* repo.remove(id))) return yield* notFound
        yield* recordChange(actor, row.familyId, id, "service.deleted", { title: row.title })
      }))
    })

    const share = Effect.fn("Services.share")(function*(actor: AuditActor, userId: string, id: string, familyId: string | null) {
      return yield* repo.inTransaction(Effect.gen(function*() {
        const seen = yield* access(userId, id)
        if (seen.userId !== userId) return yield* creatorOnly("share or unshare it")
        // Holding the membership row: a leave waits for this share, then unshares it (or came first: 404).
        yield* holdMemberships(userId, [seen.familyId, familyId])
        if (familyId !== null) {
          const standing = yield* membership.require(userId, familyId, "member").pipe(
            Effect.catchTag("NotFound", () => Effect.fail(familyNotFound))
          )
          if (standing.kind !== "family") return yield* familyNotFound
        }
        const row = yield* access(userId, id, { forUpdate: true })
        if (row.familyId === familyId) return recordOf(row)
        const updated = yield* Effect.flatMap(repo.setFamily(id, familyId), found)
        yield* recordChange(actor, row.familyId, id, "service.unshared", { title: row.title })
        yield* recordChange(actor, familyId, id, "service.shared", { title: row.title })
        return updated
      }))
    })

    const rotate = Effect.fn("Services.rotate")(function*(userId: string, id: string) {
      const row = yield* access(userId, id)
      if (row.userId !== userId) return yield* creatorOnly("rotate its webhook URL")
      const token = generateSecret("hlw")
      return created(yield* Effect.flatMap(repo.setTokenHash(userId, id, hashSecret(token)), found), token)
    })

    const refused = (refusal: Refusal) =>
      refusal.status === 415
        ? new UnsupportedMediaType({ error: refusal.message })
        : new ValidationFailed({ error: refusal.message, issues: refusal.issues })

    const deliver = Effect.fn("Services.deliver")(function*(token: string, request: InboundRequest) {
      // Every token, well-formed or not, costs the same: one hash, one indexed lookup.
      const service = yield* repo.findByTokenHash(hashSecret(token))
      if (service === undefined) return yield* new NotFound({ error: "Unknown webhook." })
      // A URL leaked to a looping sender must not flood the database and the phones (nor this parser).
      const { allowed, reported } = yield* limiter.takeSend(service.id, yield* Clock.currentTimeMillis)
      if (!allowed) return yield* new DeliveryThrottled({ decision: reported! })
      const input = mapDelivery(request, service)
      if (input instanceof Refusal) return yield* refused(input)
      // The creator and, when shared, each accepted member of the family: one inbox copy each (its
      // own read state) and a push to each of their active devices.
      const recipients = [...new Set([service.userId, ...service.familyMemberIds])]
      const devices = yield* targeting.activeOf(recipients)
      const id = yield* makeId("evt")
      const createdAt = new Date(yield* Clock.currentTimeMillis).toISOString()
      const title = input.title ?? service.title
      const preview = previewOf(input.body, "text")
      const url = input.url ?? service.url
      // An alert's firing pushes share a collapse id, so a repeat replaces the last on the phone; what a
      // resolved delivery withdraws is named by it. Anything else collapses on its own id.
      const alertCollapse = input.alertKey === null ? null : alertCollapseId(service.id, input.alertKey)
      const firing = alertCollapse !== null && input.state === "firing"
      const write = Effect.gen(function*() {
        // A resolved alert leaves the trays of the devices that got it; its queued pushes are dropped.
        const withdrawFrom = alertCollapse !== null && input.state === "resolved"
          ? yield* repo.resolveAlert(service.id, input.alertKey!)
          : []
        yield* repo.insertEvent({
          id,
          userId: service.userId,
          serviceId: service.id,
          serviceTitle: service.title,
          title: input.title,
          body: input.body,
          imageUrl: input.imageUrl,
          url: input.url,
          createdAt,
          format: input.format,
          priority: input.priority,
          alertKey: input.alertKey,
          state: input.state,
          payload: input.payload,
          alertOpen: firing
        })
        yield* watches.delivered(service.id, service.deliveryWatch, createdAt)
        yield* inbox.add(recipients.map((userId) => ({
          userId,
          origin: "event" as const,
          itemId: id,
          sourceName: service.title,
          sourceImageUrl: service.imageUrl,
          title,
          body: input.body,
          preview,
          url,
          createdAt
        })))
        const message = alertMessage({
          ref: `event:${id}`,
          collapseId: firing ? alertCollapse : id,
          title,
          body: preview,
          url,
          imageUrl: input.imageUrl ?? service.imageUrl,
          threadId: null
        })
        const withdraw = withdrawFrom.length > 0 ? withdrawMessage(alertCollapse!) : undefined
        return yield* outbox.toDevices([
          ...(withdraw !== undefined ? [{ devices: withdrawFrom, origin: "event", itemId: id, purpose: "withdraw", message: withdraw } as const] : []),
          { devices, origin: "event", itemId: id, purpose: "alert", message, priority: input.priority }
        ])
      })
      // A resolved alert reads before it writes: one transaction (the only delivery that costs a statement
      // more). Everything else is the one unit-of-work statement it always was.
      const receipts = yield* (input.state === "resolved" && alertCollapse !== null
        ? repo.inTransaction(unit.commit(write))
        : unit.commit(write)).pipe(
          Effect.catchTag("MissingReference", () => Effect.fail(new NotFound({ error: "Unknown webhook." })))
        )
      // The sender is not kept waiting for providers: the outbox's worker sends.
      if (receipts.length > 0) yield* outbox.wake
      yield* watches.afterDelivery(service.id, service.deliveryWatch)
      return { eventId: id, rateLimit: reported }
    })

    return Services.of({
      list: repo.list,
      create,
      get: (userId, id) => Effect.map(access(userId, id), recordOf),
      update,
      remove,
      share,
      rotate,
      deliver,
      events: (userId, limit) => Effect.map(repo.events(userId, limit), (items) => new EventList({ items }))
    })
  }))

  static readonly layer = Services.layerNoDeps.pipe(
    Layer.provide([ServicesRepo.layer, DeviceTargeting.layer, UnitOfWork.layer, Membership.layer, AuditTrail.layer]),
    // The handlers read it too (each record's `watch`).
    Layer.provideMerge(WatchSettings.layer)
  )
}
