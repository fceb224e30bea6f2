/**
 * The webhook-service capability's rules: services an agent creates, their
 * webhook URLs (a 256-bit `hlw_…` token, stored as a hash, shown once), the
 * sharing rules of the spec's table, and inbound deliveries: each becomes an
 * Event, an inbox copy per recipient and a durable push per device.
 *
 * Sharing: only the creator shares, unshares or rotates; a family's owner may
 * also rename or delete a service shared with the family. Families arrive
 * with the teams capability; until then no family exists, so sharing with
 * one answers 404 and every service is visible to its creator only.
 */
import { AgentServiceWithWebhookUrl, EventList, NotFound, ServiceCreated } from "@herald/api"
import type { LimitReached } from "@herald/api"
import type { AgentService, CreateServiceRequest, InboundJson, UpdateServiceRequest } from "@herald/api"
import { Clock, Context, Data, Effect, Layer } from "effect"
import { generateSecret, hashSecret } from "../auth/Secrets.ts"
import { RateLimiter } from "../billing/RateLimiter.ts"
import type { Decision } from "../billing/RateLimiter.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { UnitOfWork } from "../db/UnitOfWork.ts"
import { DeviceTargeting } from "../identity/DeviceTargeting.ts"
import { InboxWrites, previewOf } from "../inbox/InboxWrites.ts"
import { makeId } from "../lib/Ids.ts"
import { alertMessage } from "../push/Alerts.ts"
import { Outbox } from "../push/Outbox.ts"
import { ServicesRepo } from "./Repo.ts"

const notFound = new NotFound({ error: "Service not found." })

/** An inbound delivery over its service's send budget (the per-token send limit, counted per service). */
export class DeliveryThrottled extends Data.TaggedError("DeliveryThrottled")<{ readonly decision: Decision }> {}

export class Services extends Context.Service<Services, {
  readonly list: (userId: string) => Effect.Effect<ReadonlyArray<AgentService>>
  readonly create: (userId: string, input: CreateServiceRequest) => Effect.Effect<ServiceCreated, NotFound | LimitReached>
  readonly get: (userId: string, id: string) => Effect.Effect<AgentService, NotFound>
  readonly update: (userId: string, id: string, input: UpdateServiceRequest) => Effect.Effect<AgentService, NotFound>
  readonly remove: (userId: string, id: string) => Effect.Effect<void, NotFound>
  readonly share: (userId: string, id: string, familyId: string | null) => Effect.Effect<AgentService, NotFound>
  readonly rotate: (userId: string, id: string) => Effect.Effect<ServiceCreated, NotFound>
  /** An inbound delivery to the service whose webhook token this is. */
  readonly deliver: (token: string, input: InboundJson) => Effect.Effect<
    { readonly eventId: string; readonly rateLimit: Decision | undefined },
    NotFound | DeliveryThrottled
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
    const { publicUrl } = yield* AppConfig

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

    // Visible services only; another account's answers 404 like a missing one.
    const visible = (userId: string, id: string) =>
      Effect.flatMap(repo.find(userId, id), (row) => row === undefined ? Effect.fail(notFound) : Effect.succeed(row))

    const create = Effect.fn("Services.create")(function*(userId: string, input: CreateServiceRequest) {
      yield* checkReplyWebhook(userId, input.defaultReplyWebhookId)
      const token = generateSecret("hlw")
      const id = yield* makeId("svc")
      const row = yield* repo.insert({
        id,
        userId,
        title: input.title,
        imageUrl: input.imageUrl ?? null,
        url: input.url ?? null,
        defaultReplyWebhookId: input.defaultReplyWebhookId ?? null,
        tokenHash: hashSecret(token)
      }).pipe(Effect.catchTag("MissingReference", () => Effect.fail(replyWebhookNotFound)))
      return created(row, token)
    })

    // A write finds no row when the service went away meanwhile: 404 too.
    const found = (row: AgentService | undefined) => row === undefined ? Effect.fail(notFound) : Effect.succeed(row)

    const update = Effect.fn("Services.update")(function*(userId: string, id: string, input: UpdateServiceRequest) {
      yield* checkReplyWebhook(userId, input.defaultReplyWebhookId)
      const row = yield* repo.update(userId, id, input).pipe(Effect.catchTag("MissingReference", () => Effect.fail(replyWebhookNotFound)))
      return yield* found(row)
    })

    const remove = Effect.fn("Services.remove")(function*(userId: string, id: string) {
      if (!(yield* repo.remove(userId, id))) return yield* notFound
    })

    const share = Effect.fn("Services.share")(function*(userId: string, id: string, familyId: string | null) {
      yield* visible(userId, id)
      if (familyId !== null) return yield* new NotFound({ error: "Family not found." })
      return yield* Effect.flatMap(repo.setFamily(userId, id, null), found)
    })

    const rotate = Effect.fn("Services.rotate")(function*(userId: string, id: string) {
      const token = generateSecret("hlw")
      return created(yield* Effect.flatMap(repo.setTokenHash(userId, id, hashSecret(token)), found), token)
    })

    const deliver = Effect.fn("Services.deliver")(function*(token: string, input: InboundJson) {
      // Every token, well-formed or not, costs the same: one hash, one indexed lookup.
      const service = yield* repo.findByTokenHash(hashSecret(token))
      if (service === undefined) return yield* new NotFound({ error: "Unknown webhook." })
      // A URL leaked to a looping sender must not flood the database and the phones.
      const { allowed, reported } = limiter.takeSend(service.id, yield* Clock.currentTimeMillis)
      if (!allowed) return yield* new DeliveryThrottled({ decision: reported! })
      // One inbox copy per recipient (each with its own read state); family
      // members join the recipients when the teams capability lands.
      const devices = yield* targeting.activeOf([service.userId])
      const id = yield* makeId("evt")
      const createdAt = new Date(yield* Clock.currentTimeMillis).toISOString()
      const title = input.title ?? service.title
      const preview = previewOf(input.body, "text")
      const url = input.url ?? service.url
      // A service deleted since it was read: the event has nowhere to go, as for an unknown token.
      const receipts = yield* unit.commit(Effect.gen(function*() {
        yield* repo.insertEvent({
          id,
          userId: service.userId,
          serviceId: service.id,
          serviceTitle: service.title,
          title: input.title ?? null,
          body: input.body,
          imageUrl: input.imageUrl ?? null,
          url: input.url ?? null,
          createdAt
        })
        yield* inbox.add([{
          userId: service.userId,
          origin: "event",
          itemId: id,
          sourceName: service.title,
          sourceImageUrl: service.imageUrl,
          title,
          body: input.body,
          preview,
          url,
          createdAt
        }])
        const message = alertMessage({
          ref: `event:${id}`,
          collapseId: id,
          title,
          body: preview,
          url,
          imageUrl: input.imageUrl ?? service.imageUrl,
          threadId: null
        })
        return yield* outbox.enqueue(devices.map((device) => ({
          userId: device.userId,
          deviceId: device.id,
          origin: "event" as const,
          itemId: id,
          purpose: "alert" as const,
          message
        })))
      })).pipe(Effect.catchTag("MissingReference", () => Effect.fail(new NotFound({ error: "Unknown webhook." }))))
      // The sender is not kept waiting for providers: the outbox's worker sends.
      if (receipts.length > 0) yield* outbox.wake
      return { eventId: id, rateLimit: reported }
    })

    return Services.of({
      list: repo.list,
      create,
      get: visible,
      update,
      remove,
      share,
      rotate,
      deliver,
      events: (userId, limit) => Effect.map(repo.events(userId, limit), (items) => new EventList({ items }))
    })
  }))

  static readonly layer = Services.layerNoDeps.pipe(
    Layer.provide([ServicesRepo.layer, DeviceTargeting.layer, UnitOfWork.layer])
  )
}
