/**
 * The reply-webhook capability's rules: saved signed destinations for prompt
 * outcomes. A URL is checked when saved against what is known without DNS
 * (IP literals, `localhost` names), and its resolved addresses are judged on
 * every attempt; the signing secret is shown on creation and rotation only.
 */
import {
  Interaction,
  LimitReached,
  NotFound,
  ReplyWebhookCreated,
  ReplyWebhookList,
  ReplyWebhookWithDeliveries,
  WebhookTargetRefused
} from "@herald/api"
import type { CreateWebhookRequest, ReplyWebhook, ReplyWebhookDelivery, UpdateWebhookRequest } from "@herald/api"
import { Clock, Context, Effect, Layer } from "effect"
import { connectorTarget, ConnectorTargets } from "../connectors/Targets.ts"
import { MAX_REPLY_WEBHOOKS } from "../config/Limits.ts"
import { WebhookConfig } from "../config/WebhookConfig.ts"
import { canonicalSha256 } from "../lib/Canonical.ts"
import { makeId } from "../lib/Ids.ts"
import { Deliveries } from "./Deliveries.ts"
import { DeliveriesRepo } from "./DeliveriesRepo.ts"
import { checkUrl } from "./Outbound.ts"
import { eventPayload } from "./Payloads.ts"
import { WebhooksRepo } from "./WebhooksRepo.ts"
import { generateSigningSecret } from "./Signing.ts"

const ALL_EVENTS = ["interaction.answered", "interaction.expired", "interaction.canceled"] as const
/** A subscription list names each event once (a repeated one is collapsed, as token scopes are). */
const distinct = <A>(items: ReadonlyArray<A>): ReadonlyArray<A> => [...new Set(items)]

const notFound = new NotFound({ error: "Reply webhook not found." })
const RECENT_DELIVERIES = 50

/** The made-up prompt of a sample event: an approved deploy. */
const sampleInteraction = (now: string) => {
  const fields = { kind: "approval" as const, title: "Deploy to production?", prompt: "This is a sample event from Herald.", choices: [] }
  return new Interaction({
    id: "int_sample",
    ...fields,
    presentation: "notification",
    status: "approved",
    response: null,
    imageUrl: null,
    url: null,
    actionDigest: canonicalSha256(fields),
    primaryLabel: null,
    secondaryLabel: null,
    accepted: 1,
    respondingDeviceId: null,
    respondingUserId: null,
    expiresAt: now,
    createdAt: now,
    respondedAt: now,
    canceledAt: null,
    urgent: false,
    defaultOnTimeout: null,
    timedOut: false,
    remind: null,
    remindersSent: 0
  }, { disableChecks: true })
}

export class ReplyWebhooks extends Context.Service<ReplyWebhooks, {
  readonly list: (userId: string) => Effect.Effect<ReplyWebhookList>
  readonly create: (userId: string, input: CreateWebhookRequest) => Effect.Effect<ReplyWebhookCreated, WebhookTargetRefused | LimitReached>
  readonly get: (userId: string, id: string) => Effect.Effect<ReplyWebhookWithDeliveries, NotFound>
  readonly update: (userId: string, id: string, input: UpdateWebhookRequest) => Effect.Effect<ReplyWebhook, NotFound | WebhookTargetRefused>
  readonly remove: (userId: string, id: string) => Effect.Effect<void, NotFound>
  readonly rotateSecret: (userId: string, id: string) => Effect.Effect<ReplyWebhookCreated, NotFound>
  readonly test: (userId: string, id: string) => Effect.Effect<ReplyWebhookDelivery, NotFound>
  /** Whether the account has this webhook (a prompt's `webhookId`, a service's default). */
  readonly exists: (userId: string, id: string) => Effect.Effect<boolean>
}>()("herald/ReplyWebhooks") {
  static readonly layerNoDeps = Layer.effect(ReplyWebhooks, Effect.gen(function*() {
    const repo = yield* WebhooksRepo
    const deliveriesRepo = yield* DeliveriesRepo
    const deliveries = yield* Deliveries
    const config = yield* WebhookConfig
    const policy = { allowPrivateNetwork: config.allowPrivateNetwork, timeout: config.attemptTimeout, maxRedirects: 3 }

    const connectors = yield* ConnectorTargets
    const refused = (reason: string) => new WebhookTargetRefused({ error: `The URL is refused: ${reason}.` })
    // A `connector://` URL (decisions.md) names a connector route of the account instead of a host.
    const allowed = (userId: string, url: string) =>
      connectorTarget(url) !== undefined
        ? Effect.flatMap(connectors.refuse(userId, url), (reason) => reason === undefined ? Effect.void : Effect.fail(refused(reason)))
        : checkUrl(policy, url).pipe(Effect.mapError(refused))

    const create = Effect.fn("ReplyWebhooks.create")(function*(userId: string, input: CreateWebhookRequest) {
      yield* allowed(userId, input.url)
      const signingSecret = generateSigningSecret()
      const id = yield* makeId("whk")
      const webhook = yield* repo.create({
        id,
        userId,
        signingSecret,
        name: input.name,
        url: input.url,
        preset: input.preset ?? "generic",
        headers: input.headers ?? [],
        events: input.events === undefined ? ALL_EVENTS : distinct(input.events),
        enabled: input.enabled ?? true,
        isDefault: input.isDefault ?? false
      }, MAX_REPLY_WEBHOOKS)
      return new ReplyWebhookCreated({ webhook, signingSecret })
    })

    const get = Effect.fn("ReplyWebhooks.get")(function*(userId: string, id: string) {
      const webhook = yield* repo.find(userId, id)
      if (webhook === undefined) return yield* notFound
      const recent = yield* deliveriesRepo.recent(id, RECENT_DELIVERIES)
      return new ReplyWebhookWithDeliveries({ ...webhook, deliveries: recent })
    })

    const update = Effect.fn("ReplyWebhooks.update")(function*(userId: string, id: string, input: UpdateWebhookRequest) {
      if (input.url !== undefined) yield* allowed(userId, input.url)
      const webhook = yield* repo.update(userId, id, input.events === undefined ? input : { ...input, events: distinct(input.events) })
      if (webhook === undefined) return yield* notFound
      return webhook
    })

    const remove = Effect.fn("ReplyWebhooks.remove")(function*(userId: string, id: string) {
      if (!(yield* repo.remove(userId, id))) return yield* notFound
    })

    const rotateSecret = Effect.fn("ReplyWebhooks.rotateSecret")(function*(userId: string, id: string) {
      const signingSecret = generateSigningSecret()
      const webhook = yield* repo.rotateSecret(userId, id, signingSecret)
      if (webhook === undefined) return yield* notFound
      return new ReplyWebhookCreated({ webhook, signingSecret })
    })

    const test = Effect.fn("ReplyWebhooks.test")(function*(userId: string, id: string) {
      const webhook = yield* repo.find(userId, id)
      if (webhook === undefined) return yield* notFound
      const now = new Date(yield* Clock.currentTimeMillis).toISOString()
      const deliveryId = yield* makeId("whd")
      yield* deliveriesRepo.insert([{
        id: deliveryId,
        userId,
        webhookId: id,
        interactionId: null,
        type: "interaction.answered",
        payload: eventPayload(webhook.preset, "interaction.answered", sampleInteraction(now), now),
        nextAttemptAt: null
      }])
      yield* deliveries.sendNow(deliveryId)
      return (yield* deliveriesRepo.find(deliveryId))!
    })

    return ReplyWebhooks.of({
      list: (userId) => Effect.map(repo.list(userId), (items) => new ReplyWebhookList({ items })),
      create,
      get,
      update,
      remove,
      rotateSecret,
      test,
      exists: repo.exists
    })
  }))

  static readonly layer = ReplyWebhooks.layerNoDeps.pipe(Layer.provideMerge(Deliveries.layer))
}
