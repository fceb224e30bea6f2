/**
 * How a page changes: paging people at a step, the escalation steps, acknowledge,
 * escalate and resolve. Called by the page's entity (serialized per page) and,
 * for step 0, by page creation.
 *
 * A step is one transaction: the step counter moves (a conditional update, so
 * a step runs once even across processes), each paged person becomes a
 * `page_notified` row, and only for the rows that are new the device pushes,
 * the inbox copy and the feed entry are written — so a step re-run after a
 * crash pages nobody twice. Pushes are outbox rows sent after the commit (or by
 * the outbox worker if the process dies first).
 *
 * Step timers are delivered at least once (a restart, a shard move, a node
 * start re-delivers a message another node may still be processing): a timer
 * runs exactly the step it was given (and earlier ones not yet run), each from
 * the step before it, checked under the page's row lock. A delivery that waited
 * on the lock while another ran its step finds it done and stops, never taking
 * "the next one" — only a person's escalate does that.
 */
import { Conflict, NotFound } from "@herald/api"
import type { OncallPage } from "@herald/api"
import { Context, Effect, Layer } from "effect"
import { DeviceTargeting } from "../identity/DeviceTargeting.ts"
import { ActivityFeed } from "../inbox/ActivityFeed.ts"
import { InboxWrites, previewOf } from "../inbox/InboxWrites.ts"
import { alertMessage, withdrawMessage } from "../push/Alerts.ts"
import { PageMail } from "../email/PageMail.ts"
import { Outbox } from "../push/Outbox.ts"
import { AuditTrail } from "../teams/AuditTrail.ts"
import type { AuditActor } from "../teams/AuditTrail.ts"
import { PagesRepo } from "./PagesRepo.ts"
import type { PageState } from "./PagesRepo.ts"
import { GroupsRepo, overridesOf, rotationOf } from "./GroupsRepo.ts"
import type { GroupData } from "./GroupsRepo.ts"
import { nextAfter, onCallAt } from "./Rotation.ts"

/** The actor of a change no person made: an escalation step run by its timer. */
export const systemActor: AuditActor = { userId: null, tokenId: null, ip: null, userAgent: "herald escalation" }

export const notFound = new NotFound({ error: "Page not found." })

/** Who step `step` pages at `now`: 0 is the person on call; k ≥ 1 is escalation step k's target. */
export const targetsOf = (group: GroupData, step: number, now: number): ReadonlyArray<string> => {
  if (step === 0) {
    const shift = onCallAt(rotationOf(group), overridesOf(group), now)
    return shift === undefined ? [] : [shift.userId]
  }
  const target = group.escalation[step - 1]?.target
  if (target === "group") return group.members.map((m) => m.userId)
  if (target === "next") {
    const next = nextAfter(rotationOf(group), now)
    return next === undefined ? [] : [next]
  }
  return []
}

export class PageSteps extends Context.Service<PageSteps, {
  /**
   * Pages `userIds` at `step` inside the caller's transaction: marks them
   * notified and, for those not marked before, writes pushes, inbox copy and
   * feed entry. Answers the receipts to send after the commit.
   */
  readonly notify: (page: PageState, groupName: string, step: number, userIds: ReadonlyArray<string>, at: string) => Effect.Effect<ReadonlyArray<string>>
  /** Sends receipts committed by `notify`. */
  readonly send: (receipts: ReadonlyArray<string>) => Effect.Effect<void>
  /** The timer of step `step` fired: runs every step up to it not yet run, while the page is triggered. */
  readonly due: (id: string, step: number) => Effect.Effect<void>
  readonly escalate: (id: string, actor: AuditActor) => Effect.Effect<OncallPage, NotFound | Conflict>
  readonly acknowledge: (id: string, actor: AuditActor) => Effect.Effect<OncallPage, NotFound | Conflict>
  readonly resolve: (id: string, actor: AuditActor) => Effect.Effect<OncallPage, NotFound>
}>()("herald/PageSteps") {
  static readonly layer = Layer.effect(PageSteps, Effect.gen(function*() {
    const repo = yield* PagesRepo
    const groups = yield* GroupsRepo
    const outbox = yield* Outbox
    const targeting = yield* DeviceTargeting
    const inbox = yield* InboxWrites
    const feed = yield* ActivityFeed
    const audit = yield* AuditTrail
    const pageMail = yield* PageMail

    const nowIso = Effect.map(Effect.clockWith((c) => c.currentTimeMillis), (ms) => new Date(ms).toISOString())

    const notify = (page: PageState, groupName: string, step: number, userIds: ReadonlyArray<string>, at: string) =>
      Effect.gen(function*() {
        const fresh = yield* repo.markNotified(page.id, step, [...new Set(userIds)], at)
        if (fresh.length === 0) return []
        const body = page.body ?? `Paged by on-call group ${groupName}.`
        const message = alertMessage({
          ref: `page:${page.id}`,
          collapseId: page.id,
          title: page.title,
          body: previewOf(body, "text"),
          url: page.url,
          imageUrl: null,
          threadId: null,
          category: "HERALD_PAGE",
          data: { pageId: page.id, step: String(step) },
          interruptionLevel: "time-sensitive"
        })
        const devices = yield* targeting.activeOf(fresh)
        // Who has no active device is mailed instead, when their e-mail channel takes pages (email/PageMail.ts).
        yield* pageMail.queue(page, groupName, fresh.filter((userId) => !devices.some((d) => d.userId === userId)))
        // A page breaks through quiet hours (quiet/QuietGate.ts).
        const receipts = yield* outbox.toDevices(
          { devices, origin: "page", itemId: page.id, purpose: "alert", priority: "critical", message },
          { sendNow: true }
        )
        // Filed once per person (a later step finds the copy there).
        yield* inbox.insert(fresh.map((userId) => ({
          userId,
          origin: "page" as const,
          itemId: page.id,
          sourceName: groupName,
          title: page.title,
          body,
          url: page.url,
          appId: page.appId,
          createdAt: page.createdAt
        })))
        yield* Effect.forEach(fresh, (userId) =>
          feed.record({
            userId,
            kind: "notification",
            refId: page.id,
            sourceName: groupName,
            title: page.title,
            detail: previewOf(body, "text"),
            url: page.url,
            result: null,
            createdAt: page.createdAt
          }), { discard: true })
        return receipts
      })

    /**
     * The page's feed entries show how it ended for everyone it paged, and their open inbox streams hear of
     * it (in the change's transaction).
     */
    const conclude = (page: PageState, result: string) =>
      Effect.flatMap(repo.notifiedUsers(page.id), (userIds) =>
        Effect.andThen(
          Effect.forEach(userIds, (userId) =>
            feed.conclude({
              userId,
              kind: "notification",
              refId: page.id,
              title: page.title,
              detail: page.body === null ? null : previewOf(page.body, "text"),
              result
            }), { discard: true }),
          inbox.changed(userIds.map((userId) => ({ userId, ref: `page:${page.id}` })))
        ))

    const send = (receipts: ReadonlyArray<string>) =>
      Effect.asVoid(outbox.sendCommitted(receipts))

    /**
     * Runs step `target` in a transaction, only from the step before it (read under the page's row lock):
     * "moved" when the page is already past it (another delivery, node or person ran it meanwhile), "stopped"
     * when the page is no longer triggered or has no such step. Without `target`: the step after the
     * current one, chosen under the lock (a person's escalate).
     */
    const runStep = (id: string, actor: AuditActor, manual: boolean, target?: number) =>
      Effect.gen(function*() {
        const at = yield* nowIso
        const outcome = yield* repo.inTransaction(Effect.gen(function*() {
          const page = yield* repo.state(id, { forUpdate: true })
          if (page === undefined || page.status !== "triggered" || page.groupId === null) return "stopped" as const
          const step = target ?? page.step + 1
          if (page.step !== step - 1) return "moved" as const
          const group = yield* groups.find(page.groupId, at)
          if (group === undefined || step > group.escalation.length) return "stopped" as const
          if (!(yield* repo.advance(id, page.step, step, at))) return "moved" as const
          const targets = targetsOf(group, step, Date.parse(at))
          const receipts = yield* notify(page, group.name, step, targets, at)
          yield* audit.record(actor, {
            teamId: page.teamId,
            action: "page.escalated",
            targetType: "page",
            targetId: id,
            metadata: { step, target: group.escalation[step - 1]!.target, notified: targets, manual }
          })
          return receipts
        }))
        if (typeof outcome === "string") return outcome
        yield* send(outcome)
        return "ran" as const
      })

    const due = Effect.fn("PageSteps.due")(function*(id: string, step: number) {
      // Steps run in order: a later timer first runs any earlier step not yet run, each by its own number.
      // Steps only go up, so every turn runs a step or finds the page further on: the loop ends.
      for (;;) {
        const page = yield* repo.state(id)
        if (page === undefined || page.status !== "triggered" || page.step >= step) return
        if ((yield* runStep(id, systemActor, false, page.step + 1)) === "stopped") return
      }
    })

    const recordOf = (id: string) => Effect.flatMap(repo.record(id), (page) => page === undefined ? Effect.fail(notFound) : Effect.succeed(page))

    const escalate = Effect.fn("PageSteps.escalate")(function*(id: string, actor: AuditActor) {
      const page = yield* repo.state(id)
      if (page === undefined) return yield* notFound
      if (page.status !== "triggered") return yield* new Conflict({ error: `The page is ${page.status}; only a triggered page escalates.` })
      if ((yield* runStep(id, actor, true)) !== "ran") {
        return yield* new Conflict({ error: "The page has no escalation step left." })
      }
      return yield* recordOf(id)
    })

    const acknowledge = Effect.fn("PageSteps.acknowledge")(function*(id: string, actor: AuditActor) {
      const at = yield* nowIso
      const outcome = yield* repo.inTransaction(Effect.gen(function*() {
        const page = yield* repo.state(id, { forUpdate: true })
        if (page === undefined) return "missing" as const
        if (page.status === "resolved") return "resolved" as const
        if (page.status === "acknowledged") return "unchanged" as const
        yield* repo.acknowledge(id, actor.userId ?? "", at)
        yield* audit.record(actor, { teamId: page.teamId, action: "page.acknowledged", targetType: "page", targetId: id })
        yield* conclude(page, "acknowledged")
        return "changed" as const
      }))
      if (outcome === "missing") return yield* notFound
      if (outcome === "resolved") return yield* new Conflict({ error: "The page is resolved." })
      return yield* recordOf(id)
    })

    const resolve = Effect.fn("PageSteps.resolve")(function*(id: string, actor: AuditActor) {
      const at = yield* nowIso
      const withdrawals = yield* repo.inTransaction(Effect.gen(function*() {
        const page = yield* repo.state(id, { forUpdate: true })
        if (page === undefined) return undefined
        if (page.status === "resolved") return []
        yield* repo.resolve(id, actor.userId ?? "", at)
        yield* audit.record(actor, { teamId: page.teamId, action: "page.resolved", targetType: "page", targetId: id })
        yield* conclude(page, "resolved")
        // The alert leaves every tray still showing it; alerts not yet sent are dropped.
        const devices = yield* repo.retireAlerts(id)
        return yield* outbox.toDevices(
          { devices, origin: "page", itemId: id, purpose: "withdraw", message: withdrawMessage(id) },
          { sendNow: true }
        )
      }))
      if (withdrawals === undefined) return yield* notFound
      yield* send(withdrawals)
      return yield* recordOf(id)
    })

    return PageSteps.of({ notify, send, due, escalate, acknowledge, resolve })
  }))
}
