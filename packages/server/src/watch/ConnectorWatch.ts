/**
 * A tunnel connector's heartbeat watch as the connector capability sees it
 * (docs/dead-mans-switch.md): `alertAfterSeconds` saved in the connector's
 * transaction, its timer armed after the commit, the connector record's
 * `alertAfterSeconds`/`silentSince`, and a heartbeat ending a silence. The
 * actor is the services' one (`DeliveryWatch`, keyed by the connector id);
 * its check for a connector is WatchAlerts.ts.
 */
import { Connector } from "@herald/api"
import { Clock, Context, Effect, Layer } from "effect"
import { Deadline } from "../cluster/Deadline.ts"
import * as EntityCalls from "../cluster/EntityCalls.ts"
import { connectorDueOf, ConnectorWatchRepo } from "./ConnectorWatchRepo.ts"
import type { ConnectorWatchRow } from "./ConnectorWatchRepo.ts"
import { checkKey, DeliveryWatch } from "./WatchProtocol.ts"

/** The check that tells a silence `since` has ended: one per silence, however many heartbeats end it. */
export const connectorResumeKey = (since: string) => `resume:${Date.parse(since)}`

export class ConnectorWatch extends Context.Service<ConnectorWatch, {
  /** Saves (or removes, given null) the watch in the caller's transaction; it restarts now. */
  readonly save: (connectorId: string, alertAfterSeconds: number | null) => Effect.Effect<void>
  /** Stores the watch's next timer (after the save commits); a failure is logged and repaired at the next start. */
  readonly arm: (connectorId: string) => Effect.Effect<void>
  readonly rearmAll: Effect.Effect<void>
  /** After a heartbeat: a silent connector's resumption is checked at once (one indexed read per heartbeat). */
  readonly seen: (connectorId: string) => Effect.Effect<void>
  /** The records with `alertAfterSeconds` and `silentSince` (null when not watched). */
  readonly attach: (connectors: ReadonlyArray<Connector>) => Effect.Effect<ReadonlyArray<Connector>>
}>()("herald/ConnectorWatch") {
  static readonly layerNoDeps = Layer.effect(ConnectorWatch, Effect.gen(function*() {
    const repo = yield* ConnectorWatchRepo
    const watch = yield* DeliveryWatch.client

    const store = (id: string, deadline: Deadline) =>
      EntityCalls.call(watch(id).Check(deadline, { discard: true })).pipe(
        Effect.catch((e) => Effect.logWarning("could not store a connector watch timer; it is stored again at the next start", e)),
        Effect.annotateLogs("connectorId", id)
      )
    const armState = (w: ConnectorWatchRow, now: number) => {
      if (w.silentSince === null) {
        const due = connectorDueOf(w)
        return store(w.connectorId, Deadline.at(due, checkKey(due)))
      }
      const resumed = w.lastSeenAt !== null && Date.parse(w.lastSeenAt) > Date.parse(w.silentSince)
      return resumed ? store(w.connectorId, Deadline.at(now, connectorResumeKey(w.silentSince))) : Effect.void
    }

    return ConnectorWatch.of({
      save: Effect.fn("ConnectorWatch.save")(function*(id: string, seconds: number | null) {
        yield* repo.save(id, seconds, new Date(yield* Clock.currentTimeMillis).toISOString())
      }),
      arm: Effect.fn("ConnectorWatch.arm")(function*(id: string) {
        const [w] = yield* repo.states([id])
        if (w !== undefined) yield* armState(w, yield* Clock.currentTimeMillis)
      }),
      rearmAll: Effect.gen(function*() {
        const now = yield* Clock.currentTimeMillis
        yield* Effect.forEach(yield* repo.all, (w) => armState(w, now), { concurrency: 16, discard: true })
      }).pipe(Effect.withSpan("ConnectorWatch.rearmAll")),
      seen: (id) =>
        Effect.gen(function*() {
          const [w] = yield* repo.states([id])
          if (w !== undefined && w.silentSince !== null) yield* armState(w, yield* Clock.currentTimeMillis)
        }),
      attach: (connectors) =>
        Effect.map(repo.states(connectors.map((c) => c.id)), (states) => {
          const byId = new Map(states.map((w) => [w.connectorId, w]))
          return connectors.map((c) => {
            const w = byId.get(c.id)
            return new Connector({
              ...c,
              alertAfterSeconds: w?.alertAfterSeconds ?? null,
              silentSince: w?.silentSince ?? null
            }, { disableChecks: true })
          })
        })
    })
  }))

  static readonly layer = ConnectorWatch.layerNoDeps.pipe(Layer.provide(ConnectorWatchRepo.layer))
}
