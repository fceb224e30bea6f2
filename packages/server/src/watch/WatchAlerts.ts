/**
 * What a watched service's `Check` does (the entity runs it, one at a time
 * per service; WatchBehaviour.ts). Delivered at least once, perhaps twice at
 * once, it moves the watch only with conditional updates:
 *
 * - not silent, a delivery since (due later than now): re-arm for that
 *   delivery + period + grace (a new key; the old timer is spent);
 * - not silent and due: mark it silent since the last delivery (or the start)
 *   and, in the same transaction, queue one push (priority `high`) to each
 *   device of the audience; or page the on-call group (the page's dedup key is
 *   the silence, so a retry after a crash is absorbed, not a second page);
 * - silent, a delivery since: clear the silence and, in the same transaction,
 *   queue the "delivering again" push (or resolve the page); re-arm.
 *
 * A second delivery of any of these finds the state already moved and does
 * nothing (at most it re-sends a timer already stored: a no-op).
 */
import { Clock, Context, Effect, Layer } from "effect"
import type { Deadline } from "../cluster/Deadline.ts"
import { DeviceTargeting } from "../identity/DeviceTargeting.ts"
import { Pages } from "../oncall/Pages.ts"
import { alertMessage } from "../push/Alerts.ts"
import { Outbox } from "../push/Outbox.ts"
import { ConnectorWatch } from "./ConnectorWatch.ts"
import { connectorBaseOf, connectorDueOf, ConnectorWatchRepo } from "./ConnectorWatchRepo.ts"
import type { ConnectorWatchRow } from "./ConnectorWatchRepo.ts"
import { WatchSettings } from "./WatchSettings.ts"
import { baseOf, dueOf, WatchRepo } from "./WatchRepo.ts"
import type { WatchRow } from "./WatchRepo.ts"

/** "2026-11-28 20:25 UTC": the moment in the push's text. */
const shown = (iso: string) => `${iso.slice(0, 16).replace("T", " ")} UTC`

export const silentText = (title: string, since: string) => `${title} has been silent since ${shown(since)}`
export const resumedText = (title: string) => `${title} is delivering again`
export const connectorSilentText = (name: string, since: string) => `Connector ${name} has missed its heartbeats since ${shown(since)}`
export const connectorResumedText = (name: string) => `Connector ${name} is back online`

/** Connector ids (`conn_…`) share the entity with services (`svc_…`). */
export const isConnectorId = (id: string) => id.startsWith("conn_")

/** The page's dedup key: one page per silence, whatever retries. */
const pageKey = (serviceId: string, since: string) => `watch:${serviceId}:${Date.parse(since)}`

export class WatchAlerts extends Context.Service<WatchAlerts, {
  readonly check: (serviceId: string, deadline: Deadline) => Effect.Effect<void>
  /** The same for a tunnel connector's heartbeats (its owner is told; no page). */
  readonly checkConnector: (connectorId: string, deadline: Deadline) => Effect.Effect<void>
}>()("herald/WatchAlerts") {
  static readonly layerNoDeps = Layer.effect(WatchAlerts, Effect.gen(function*() {
    const repo = yield* WatchRepo
    const settings = yield* WatchSettings
    const outbox = yield* Outbox
    const targeting = yield* DeviceTargeting
    const pages = yield* Pages
    const connectorRepo = yield* ConnectorWatchRepo
    const connectorWatch = yield* ConnectorWatch

    /** One push to each active device of the creator and, when shared, the family's members. */
    const notifyAudience = (w: WatchRow, body: string) =>
      notify([w.userId, ...w.familyMemberIds], "service", w.serviceId, w.title, body)

    const notify = (userIds: ReadonlyArray<string>, kind: "service" | "connector", id: string, title: string, body: string) =>
      Effect.gen(function*() {
        const devices = yield* targeting.activeOf([...new Set(userIds)])
        const message = alertMessage({
          ref: `${kind}:${id}`,
          // The resumed notice replaces the silence alert in the tray.
          collapseId: `watch-${id}`,
          title,
          body,
          url: null,
          imageUrl: null,
          threadId: null
        })
        return yield* outbox.toDevices({ devices, origin: "event", itemId: id, purpose: "alert", message, priority: "high" })
      })

    /** The group's page for this silence (absorbed when one is already open under its key). */
    const page = (w: WatchRow, since: string) =>
      pages.create(
        { userId: w.userId, tokenId: null },
        { userId: w.userId, tokenId: null, ip: null, userAgent: null },
        w.alertGroupId!,
        { title: silentText(w.title, since), body: "No delivery arrived in the expected time (dead-man's switch).", dedupKey: pageKey(w.serviceId, since) },
        undefined
      ).pipe(
        Effect.flatMap((outcome) => repo.setPage(w.serviceId, since, outcome.page.id)),
        Effect.catch((e) => Effect.logWarning("the on-call group of a silent service could not be paged", e))
      )

    const resolvePage = (w: WatchRow) =>
      w.pageId === null ? Effect.void : pages.resolve({ userId: w.userId, tokenId: null, ip: null, userAgent: null }, w.pageId).pipe(
        Effect.asVoid,
        Effect.catch((e) => Effect.logWarning("the page of a service delivering again could not be resolved", e))
      )

    const silent = (w: WatchRow) =>
      Effect.gen(function*() {
        const since = new Date(baseOf(w)).toISOString()
        const receipts = yield* repo.inTransaction(Effect.gen(function*() {
          if (!(yield* repo.markSilent(w, since))) return undefined
          return w.alertGroupId === null ? yield* notifyAudience(w, silentText(w.title, since)) : []
        }))
        // Lost the race to a delivery (or a second delivery of this timer): look again, which re-arms.
        if (receipts === undefined) return yield* settings.arm(w.serviceId)
        if (receipts.length > 0) yield* outbox.wake
        if (w.alertGroupId !== null) yield* page(w, since)
      })

    const resumed = (w: WatchRow, since: string) =>
      Effect.gen(function*() {
        const receipts = yield* repo.inTransaction(Effect.gen(function*() {
          if (!(yield* repo.markResumed(w.serviceId, since))) return undefined
          return w.alertGroupId === null ? yield* notifyAudience(w, resumedText(w.title)) : []
        }))
        if (receipts === undefined) return
        if (receipts.length > 0) yield* outbox.wake
        yield* resolvePage(w)
        yield* settings.arm(w.serviceId)
      })

    const check = Effect.fn("WatchAlerts.check")(function*(serviceId: string, deadline: Deadline) {
      const w = yield* repo.find(serviceId)
      if (w === undefined) return
      const now = yield* Clock.currentTimeMillis
      if (w.silentSince !== null) {
        const delivered = w.lastDeliveryAt !== null && Date.parse(w.lastDeliveryAt) > Date.parse(w.silentSince)
        if (delivered) return yield* resumed(w, w.silentSince)
        // Alerted, but a crash came between the silence and its page: page now (absorbed if it went out).
        if (w.alertGroupId !== null && w.pageId === null) yield* page(w, w.silentSince)
        return
      }
      // Due no later than this timer's own time counts as due (another node's clock a little behind): a
      // re-arm under this very key would be a no-op, and the watch would have no timer.
      if (dueOf(w) > Math.max(now, deadline.expiresAtMillis)) return yield* settings.arm(serviceId)
      yield* silent(w)
    })

    /** A connector: silent → one push to its owner; a heartbeat since → one "back online"; else re-arm. */
    const checkConnector = Effect.fn("WatchAlerts.checkConnector")(function*(id: string, deadline: Deadline) {
      const w = yield* connectorRepo.find(id)
      if (w === undefined) return
      const now = yield* Clock.currentTimeMillis
      const move = (moved: (w: ConnectorWatchRow) => Effect.Effect<boolean>, body: string) =>
        Effect.gen(function*() {
          const receipts = yield* connectorRepo.inTransaction(Effect.gen(function*() {
            if (!(yield* moved(w))) return undefined
            return yield* notify([w.userId], "connector", id, w.name, body)
          }))
          if (receipts !== undefined && receipts.length > 0) yield* outbox.wake
          return receipts !== undefined
        })
      if (w.silentSince !== null) {
        const since = w.silentSince
        if (w.lastSeenAt === null || Date.parse(w.lastSeenAt) <= Date.parse(since)) return
        if (yield* move(() => connectorRepo.markResumed(id, since), connectorResumedText(w.name))) yield* connectorWatch.arm(id)
        return
      }
      if (connectorDueOf(w) > Math.max(now, deadline.expiresAtMillis)) return yield* connectorWatch.arm(id)
      const since = new Date(connectorBaseOf(w)).toISOString()
      if (!(yield* move((row) => connectorRepo.markSilent(row, since), connectorSilentText(w.name, since)))) {
        yield* connectorWatch.arm(id)
      }
    })

    return WatchAlerts.of({ check, checkConnector })
  }))
}
