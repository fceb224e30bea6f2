/**
 * The notifications capability's rules: one-shot pushes to the account's
 * devices, filed in the inbox and the activity feed, and their withdrawal
 * from the device tray.
 *
 * Sending commits the notification, its inbox copy, its feed entry and one
 * outbox receipt per device as one unit of work (one statement, shared with
 * concurrent sends), then sends the receipts at once and answers with how
 * many providers accepted; whatever is not accepted in time stays queued and
 * the outbox's worker finishes it.
 */
import { AgentNotification, AgentNotificationCreated, AgentNotificationWithdrawn, NotFound, WithdrawFailed } from "@herald/api"
import type { AgentPrincipal, CreateNotificationRequest } from "@herald/api"
import { Clock, Context, Effect, Layer } from "effect"
import { AppAccess } from "../apps/AppAccess.ts"
import { UnitOfWork } from "../db/UnitOfWork.ts"
import { DeviceTargeting } from "../identity/DeviceTargeting.ts"
import { ActivityFeed } from "../inbox/ActivityFeed.ts"
import { InboxWrites, previewOf } from "../inbox/InboxWrites.ts"
import { makeId } from "../lib/Ids.ts"
import { alertMessage, withdrawMessage } from "../push/Alerts.ts"
import { Outbox, sentText } from "../push/Outbox.ts"
import { NotificationsRepo } from "./NotificationsRepo.ts"

const sentMessage = (accepted: number, devices: number, queued: number, held: number): string => {
  if (devices === 0) return "Saved to the inbox; the account has no active devices."
  if (held === devices) return "Saved to the inbox; held for the person's quiet hours (summarised when they end)."
  const parts = [...sentText({ accepted, queued }, devices)]
  if (held > 0) parts.push(`${held} held for quiet hours.`)
  return parts.join(" ")
}

export class Notifications extends Context.Service<Notifications, {
  readonly send: (agent: AgentPrincipal, input: CreateNotificationRequest) => Effect.Effect<AgentNotificationCreated, NotFound>
  readonly withdraw: (userId: string, ref: string) => Effect.Effect<AgentNotificationWithdrawn, NotFound | WithdrawFailed>
}>()("herald/Notifications") {
  static readonly layerNoDeps = Layer.effect(Notifications, Effect.gen(function*() {
    const repo = yield* NotificationsRepo
    const outbox = yield* Outbox
    const inbox = yield* InboxWrites
    const feed = yield* ActivityFeed
    const targeting = yield* DeviceTargeting
    const unit = yield* UnitOfWork
    const apps = yield* AppAccess

    // Spans kept, named once: `Effect.fn(name)` captures a stack trace on every
    // call, which cost more than the span itself on this per-request path.
    const send = Effect.fnUntraced(function*(agent: AgentPrincipal, input: CreateNotificationRequest) {
      // `appId` names an app the account can see (its own or its team's); unknown or foreign: 404. A later
      // delete leaves the id on the item, whose `app` then reads null.
      yield* apps.requireVisible(agent.userId, input.appId)
      const devices = yield* targeting.targets(agent.userId, input.deviceIds)
      // The agent's name is what the person sees as the source.
      const sourceName = agent.tokenName
      const id = yield* makeId("anot")
      const createdAt = new Date(yield* Clock.currentTimeMillis).toISOString()
      const bodyFormat = input.bodyFormat ?? "text"
      const fields = {
        title: input.title,
        body: input.body,
        summary: input.summary ?? null,
        bodyFormat,
        imageUrl: input.imageUrl ?? null,
        url: input.url ?? null,
        projectId: input.projectId ?? null,
        appId: input.appId ?? null,
        priority: input.priority ?? null
      }
      const message = alertMessage({
        ref: `notification:${id}`,
        collapseId: id,
        title: input.title,
        body: input.summary ?? previewOf(input.body, bodyFormat),
        url: fields.url,
        imageUrl: fields.imageUrl,
        threadId: fields.projectId
      })

      const notification = { id, userId: agent.userId, tokenId: agent.tokenId, sourceName, ...fields, createdAt }
      const write = Effect.gen(function*() {
        yield* repo.insert(notification)
        yield* inbox.add([{
          userId: agent.userId,
          origin: "notification",
          itemId: id,
          projectId: fields.projectId,
          sourceName,
          sourceImageUrl: null,
          title: fields.title,
          body: fields.body,
          summary: fields.summary,
          bodyFormat,
          url: fields.url,
          appId: fields.appId,
          createdAt
        }])
        yield* feed.add([{
          userId: agent.userId,
          kind: "notification",
          refId: id,
          sourceName,
          sourceImageUrl: null,
          title: fields.title,
          detail: fields.summary ?? previewOf(fields.body, bodyFormat),
          url: fields.url,
          result: null,
          createdAt
        }])
        return yield* outbox.toDevices(
          { devices, origin: "notification", itemId: id, purpose: "alert", message, priority: input.priority },
          { sendNow: true }
        )
      })
      // From the write on, the request runs to its end even if the caller goes
      // away: its pushes are sent now, not after the worker's grace.
      const summary = yield* unit.commit(write).pipe(
        // Only the account's own rows are named (devices are not: receipts outlive them), so the account went away mid-request.
        Effect.catchTag("MissingReference", () => Effect.fail(new NotFound({ error: "The account no longer exists." }))),
        Effect.flatMap(outbox.sendCommitted),
        Effect.uninterruptible
      )
      // Optional fields the caller did not set stay off the record (`appId` is not nullable).
      const { appId, priority, tokenId: _token, sourceName: _source, userId: _user, ...shown } = notification
      return new AgentNotificationCreated({
        notification: new AgentNotification({
          ...shown,
          ...(appId !== null ? { appId } : {}),
          ...(priority !== null ? { priority } : {})
        }),
        accepted: summary.accepted,
        message: sentMessage(summary.accepted, devices.length, summary.queued, summary.held ?? 0)
      })
    }, Effect.withSpan("Notifications.send"))

    const withdraw = Effect.fnUntraced(function*(userId: string, ref: string) {
      const notificationId = ref.startsWith("notification:") ? ref.slice("notification:".length) : ref
      const target = yield* repo.withdraw(userId, notificationId)
      if (target === undefined) return yield* new NotFound({ error: "Notification not found." })
      // Withdrawn (and read) whatever the devices say next: the person's open inbox shows it.
      yield* inbox.changed([{ userId, ref: `notification:${notificationId}` }])
      const devices = target.acceptedDeviceIds
      if (devices.length === 0) {
        return yield* new WithdrawFailed({ error: "No device had accepted this notification; nothing to withdraw." })
      }
      const receipts = yield* outbox.toDevices({
        devices: devices.map((deviceId) => ({ userId, deviceId })),
        origin: "notification",
        itemId: notificationId,
        purpose: "withdraw",
        message: withdrawMessage(notificationId)
      }, { sendNow: true })
      const { accepted } = yield* outbox.sendCommitted(receipts)
      if (accepted === 0) {
        return yield* new WithdrawFailed({ error: "No device accepted the removal command; the inbox copy is marked read." })
      }
      return new AgentNotificationWithdrawn({
        ok: true,
        notificationId,
        status: accepted === devices.length ? "withdrawn" : "withdraw_partial",
        accepted
      })
    }, Effect.withSpan("Notifications.withdraw"))

    return Notifications.of({ send, withdraw })
  }))

  static readonly layer = Notifications.layerNoDeps.pipe(
    Layer.provide([NotificationsRepo.layer, DeviceTargeting.layer, UnitOfWork.layer, AppAccess.layer])
  )
}
