/**
 * The dead-man's switch as the webhook-service capability sees it: checking
 * and saving a service's `watch` (in the service's own transaction), arming
 * its timer once that commits, recording deliveries, and the `watch` of the
 * service record. The alert itself is WatchAlerts.ts, run by the entity.
 *
 * The inbound path stays cheap: a delivery to a watched service adds one
 * member to the statement it already runs (`delivered`), and sends the
 * entity nothing — except the first delivery after an alert, which stores a
 * due-now check (`resume:<silence>`, one per silence) so the "delivering
 * again" notice goes out at once.
 */
import { AgentService, NotFound, ServiceWatch } from "@herald/api"
import type { ServiceWatchSettings } from "@herald/api"
import { Clock, Context, Effect, Layer } from "effect"
import { Deadline } from "../cluster/Deadline.ts"
import * as EntityCalls from "../cluster/EntityCalls.ts"
import { WATCH_DEFAULT_GRACE_SECONDS } from "../config/Limits.ts"
import { GroupsRepo } from "../oncall/GroupsRepo.ts"
import { Membership } from "../teams/Membership.ts"
import { checkKey, DeliveryWatch } from "./WatchProtocol.ts"
import { dueOf, WatchRepo } from "./WatchRepo.ts"
import type { WatchState } from "./WatchRepo.ts"

const groupNotFound = new NotFound({ error: "On-call group not found." })

/** What a delivery knows of its service's watch (read with the service, no statement more). */
export interface DeliveryWatchState {
  readonly watched: boolean
  readonly silentSince: string | null
}

/**
 * The timer a watch needs now, if any: its due check; at once when a silence has ended unannounced; or at
 * once when a silence's page was never raised (a crash, or the pages service failing, between the two).
 */
const timerOf = (w: WatchState, now: number): Deadline | undefined => {
  if (w.silentSince === null) {
    const due = dueOf(w)
    return Deadline.at(due, checkKey(due))
  }
  const resumed = w.lastDeliveryAt !== null && Date.parse(w.lastDeliveryAt) > Date.parse(w.silentSince)
  if (resumed) return Deadline.at(now, resumeKey(w.silentSince))
  return w.alertGroupId !== null && w.pageId === null ? Deadline.at(now, `page:${Date.parse(w.silentSince)}:${now}`) : undefined
}

/** The check that tells a silence `since` has ended: one per silence, however many deliveries end it. */
const resumeKey = (since: string) => `resume:${Date.parse(since)}`

export class WatchSettings extends Context.Service<WatchSettings, {
  /** The settings' on-call group must be one of a team the creator belongs to (as pages require): else 404. */
  readonly check: (userId: string, settings: ServiceWatchSettings | null | undefined) => Effect.Effect<void, NotFound>
  /** Saves (or removes, given null) the watch in the caller's transaction; it restarts now. */
  readonly save: (serviceId: string, settings: ServiceWatchSettings | null) => Effect.Effect<void>
  /** Stores the watch's next timer (after the save commits). A failure is logged: the start-up re-arm repairs it. */
  readonly arm: (serviceId: string) => Effect.Effect<void>
  /** Every watch's timer (at start): each keyed by its due time, so one already stored is left as it is. */
  readonly rearmAll: Effect.Effect<void>
  /** A delivery at `at`, inside its unit of work: recorded when the service is watched. */
  readonly delivered: (serviceId: string, watch: DeliveryWatchState, at: string) => Effect.Effect<void>
  /** After the delivery committed: a silent service's resumption is checked at once. */
  readonly afterDelivery: (serviceId: string, watch: DeliveryWatchState) => Effect.Effect<void>
  /** The records with their `watch` (null when none). */
  readonly attach: <S extends AgentService>(services: ReadonlyArray<S>) => Effect.Effect<ReadonlyArray<S>>
}>()("herald/WatchSettings") {
  static readonly layerNoDeps = Layer.effect(WatchSettings, Effect.gen(function*() {
    const repo = yield* WatchRepo
    const groups = yield* GroupsRepo
    const membership = yield* Membership
    const watch = yield* DeliveryWatch.client

    const store = (serviceId: string, deadline: Deadline) =>
      EntityCalls.call(watch(serviceId).Check(deadline, { discard: true })).pipe(
        Effect.catch((e) => Effect.logWarning("could not store a watch timer; it is stored again at the next start", e)),
        Effect.annotateLogs("serviceId", serviceId)
      )
    const armState = (w: WatchState, now: number) => {
      const timer = timerOf(w, now)
      return timer === undefined ? Effect.void : store(w.serviceId, timer)
    }

    const check = Effect.fn("WatchSettings.check")(function*(userId: string, settings: ServiceWatchSettings | null | undefined) {
      const groupId = settings?.alertGroupId
      if (groupId === undefined || groupId === null) return
      const group = yield* groups.find(groupId)
      if (group === undefined || (yield* membership.standing(userId, group.teamId)) === undefined) return yield* groupNotFound
    })

    const save = Effect.fn("WatchSettings.save")(function*(serviceId: string, settings: ServiceWatchSettings | null) {
      const now = new Date(yield* Clock.currentTimeMillis).toISOString()
      yield* repo.save(serviceId, settings === null ? null : { ...settings, graceSeconds: settings.graceSeconds ?? WATCH_DEFAULT_GRACE_SECONDS }, now)
    })

    const arm = Effect.fn("WatchSettings.arm")(function*(serviceId: string) {
      const [w] = yield* repo.states([serviceId])
      if (w !== undefined) yield* armState(w, yield* Clock.currentTimeMillis)
    })

    const rearmAll = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      yield* Effect.forEach(yield* repo.all, (w) => armState(w, now), { concurrency: 16, discard: true })
    }).pipe(Effect.withSpan("WatchSettings.rearmAll"))

    const attach = <S extends AgentService>(services: ReadonlyArray<S>) =>
      Effect.map(repo.states(services.map((s) => s.id)), (states) => {
        const byId = new Map(states.map((w) => [w.serviceId, w]))
        return services.map((s) => {
          const w = byId.get(s.id)
          const record = w === undefined ? null : new ServiceWatch({
            expectEverySeconds: w.expectEverySeconds,
            graceSeconds: w.graceSeconds,
            alertGroupId: w.alertGroupId,
            startedAt: w.startedAt,
            lastDeliveryAt: w.lastDeliveryAt,
            silentSince: w.silentSince,
            dueAt: new Date(dueOf(w)).toISOString()
          })
          // The same class as given (a created service keeps its webhook URL).
          return new (s.constructor as new(fields: S) => S)({ ...s, watch: record })
        })
      })

    return WatchSettings.of({
      check,
      save,
      arm,
      rearmAll,
      delivered: (serviceId, w, at) => w.watched ? repo.delivered(serviceId, at) : Effect.void,
      afterDelivery: (serviceId, w) =>
        w.silentSince === null ? Effect.void : Effect.flatMap(Clock.currentTimeMillis, (now) =>
          store(serviceId, Deadline.at(now, resumeKey(w.silentSince!)))),
      attach
    })
  }))

  static readonly layer = WatchSettings.layerNoDeps.pipe(
    Layer.provide(Layer.mergeAll(WatchRepo.layer, GroupsRepo.layer, Membership.layer))
  )
}
