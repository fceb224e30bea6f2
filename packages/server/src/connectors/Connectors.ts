/**
 * The connector capability's rules: registration (within the per-person
 * limit, an on-call group only of the caller's own teams), reads with the
 * online window computed from the service's clock, heartbeats, and callback
 * secrets shown on creation and rotation only.
 */
import { Connector, ConnectorCreated, ConnectorList, LimitReached, NotFound } from "@herald/api"
import type { CreateConnectorRequest, UpdateConnectorRequest } from "@herald/api"
import { Clock, Context, Effect, Layer } from "effect"
import { CONNECTORS_MAX_PER_PERSON } from "../config/Limits.ts"
import { checkLimit } from "../db/AccountLocks.ts"
import { makeId } from "../lib/Ids.ts"
import { ConnectorWatch } from "../watch/ConnectorWatch.ts"
import { Callbacks, generateCallbackSecret } from "./Callbacks.ts"
import { ConnectorsRepo } from "./ConnectorsRepo.ts"
import type { ConnectorRow } from "./ConnectorsRepo.ts"

/** decisions.md: online while the last heartbeat is under 90 s old. */
export const ONLINE_WINDOW_MS = 90_000

const notFound = new NotFound({ error: "Connector not found." })
const groupNotFound = new NotFound({ error: "On-call group not found." })

/** The record of a stored connector at `now`. */
export const toConnector = (row: ConnectorRow, now: number): Connector =>
  new Connector({
    id: row.id,
    name: row.name,
    routes: row.routes,
    oncallGroupId: row.oncallGroupId,
    online: row.lastSeenAt !== null && now - Date.parse(row.lastSeenAt) < ONLINE_WINDOW_MS,
    lastSeenAt: row.lastSeenAt,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt
  }, { disableChecks: true })

export class Connectors extends Context.Service<Connectors, {
  readonly list: (userId: string) => Effect.Effect<ConnectorList>
  readonly get: (userId: string, id: string) => Effect.Effect<Connector, NotFound>
  readonly create: (userId: string, input: CreateConnectorRequest) => Effect.Effect<ConnectorCreated, NotFound | LimitReached>
  readonly update: (userId: string, id: string, input: UpdateConnectorRequest) => Effect.Effect<Connector, NotFound>
  readonly remove: (userId: string, id: string) => Effect.Effect<void, NotFound>
  readonly heartbeat: (userId: string, id: string) => Effect.Effect<Connector, NotFound>
  readonly rotateSecret: (userId: string, id: string) => Effect.Effect<ConnectorCreated, NotFound>
}>()("herald/Connectors") {
  static readonly layerNoDeps = Layer.effect(Connectors, Effect.gen(function*() {
    const repo = yield* ConnectorsRepo
    const callbacks = yield* Callbacks
    // The heartbeat watch (docs/dead-mans-switch.md): saved with the connector, shown on every record.
    const watch = yield* ConnectorWatch
    const one = (c: Connector) => Effect.map(watch.attach([c]), ([w]) => w!)
    const now = Clock.currentTimeMillis
    const nowIso = Effect.map(now, (ms) => new Date(ms).toISOString())
    const present = (row: ConnectorRow | undefined) =>
      row === undefined ? Effect.fail(notFound) : Effect.map(now, (ms) => toConnector(row, ms))

    const checkGroup = (userId: string, groupId: string | null | undefined) =>
      groupId === null || groupId === undefined
        ? Effect.void
        : Effect.flatMap(repo.groupVisible(userId, groupId), (ok) => ok ? Effect.void : Effect.fail(groupNotFound))

    const create = Effect.fn("Connectors.create")(function*(userId: string, input: CreateConnectorRequest) {
      yield* checkGroup(userId, input.oncallGroupId)
      const id = yield* makeId("conn")
      const callbackSecret = generateCallbackSecret()
      const secretSealed = yield* callbacks.sealFor(id, callbackSecret)
      const at = yield* nowIso
      const row = yield* repo.inTransaction(Effect.gen(function*() {
        yield* checkLimit({
          count: repo.countLocked(userId),
          limit: CONNECTORS_MAX_PER_PERSON,
          error: `A person keeps at most ${CONNECTORS_MAX_PER_PERSON} connectors.`
        })
        const inserted = yield* repo.insert({
          id,
          userId,
          name: input.name,
          routes: input.routes,
          oncallGroupId: input.oncallGroupId ?? null,
          secretSealed,
          now: at
        })
        if (input.alertAfterSeconds != null) yield* watch.save(id, input.alertAfterSeconds)
        return inserted
      }))
      if (input.alertAfterSeconds != null) yield* watch.arm(id)
      return new ConnectorCreated({ connector: yield* one(toConnector(row, yield* now)), callbackSecret })
    })

    const update = Effect.fn("Connectors.update")(function*(userId: string, id: string, input: UpdateConnectorRequest) {
      // The connector first: a caller probing another account's connector learns nothing about groups.
      if ((yield* repo.find(userId, id)) === undefined) return yield* notFound
      yield* checkGroup(userId, input.oncallGroupId)
      const { alertAfterSeconds, ...changes } = input
      const row = yield* repo.inTransaction(Effect.gen(function*() {
        const updated = yield* repo.update(userId, id, changes, yield* nowIso)
        if (updated !== undefined && alertAfterSeconds !== undefined) yield* watch.save(id, alertAfterSeconds)
        return updated
      }))
      if (alertAfterSeconds !== undefined) yield* watch.arm(id)
      return yield* Effect.flatMap(present(row), one)
    })

    const rotateSecret = Effect.fn("Connectors.rotateSecret")(function*(userId: string, id: string) {
      const callbackSecret = generateCallbackSecret()
      const row = yield* repo.setSecret(userId, id, yield* callbacks.sealFor(id, callbackSecret), yield* nowIso)
      return new ConnectorCreated({ connector: yield* Effect.flatMap(present(row), one), callbackSecret })
    })

    return Connectors.of({
      list: (userId) =>
        Effect.gen(function*() {
          const rows = yield* repo.list(userId)
          const ms = yield* now
          return new ConnectorList({ items: yield* watch.attach(rows.map((row) => toConnector(row, ms))) })
        }),
      get: (userId, id) => Effect.flatMap(repo.find(userId, id), present).pipe(Effect.flatMap(one)),
      create,
      update,
      remove: (userId, id) => Effect.flatMap(repo.remove(userId, id), (removed) => removed ? Effect.void : Effect.fail(notFound)),
      heartbeat: (userId, id) =>
        Effect.flatMap(nowIso, (at) => Effect.flatMap(repo.heartbeat(userId, id, at), present)).pipe(
          Effect.tap(() => watch.seen(id)),
          Effect.flatMap(one)
        ),
      rotateSecret
    })
  }))
}
