/**
 * The web-apps capability's rules (spec "Web apps", decisions.md):
 *
 * - An app is visible to the person who added it and to every member of the
 *   team or family it is shared with. Only the person who added it may
 *   change, delete or move it (others who see it: 403; others: 404).
 * - It is identified by its URL's origin + path (`url_key`, unique per person
 *   who added it): registering a known URL updates that app.
 * - Sign-in consent and name/email disclosure are each viewer's own
 *   (`app_viewers`); an agent may revoke its account's consent but never grant
 *   it. A new origin clears every viewer's consent.
 * - Sharing is written to the team's audit log in the same transaction, and
 *   (unless `notify: false`) the team's other members get an inbox item naming
 *   the app and a durable push through the outbox, committed with the move.
 */
import { App, AppUpdated, Conflict, Forbidden, LimitReached, TeamSummary } from "@herald/api"
import type { CreateAppRequest, NotFound, UpdateAppRequest } from "@herald/api"
import { Clock, Context, Effect, Layer } from "effect"
import { MAX_APPS } from "../config/Limits.ts"
import { checkLimit } from "../db/AccountLocks.ts"
import { DeviceTargeting } from "../identity/DeviceTargeting.ts"
import { InboxWrites } from "../inbox/InboxWrites.ts"
import { makeId } from "../lib/Ids.ts"
import { alertMessage } from "../push/Alerts.ts"
import { Outbox } from "../push/Outbox.ts"
import { AuditTrail } from "../teams/AuditTrail.ts"
import type { AuditActor } from "../teams/AuditTrail.ts"
import { Membership } from "../teams/Membership.ts"
import { appNotFound } from "./AppAccess.ts"
import { AppsRepo } from "./AppsRepo.ts"
import type { AppPatch, AppRow } from "./AppsRepo.ts"
import { storageScope } from "./StorageScope.ts"

/** The app's identity for "an existing URL is updated": origin + path, query and fragment aside. */
export const urlIdentity = (url: string) => {
  const parsed = new URL(url)
  return { origin: parsed.origin, urlKey: `${parsed.origin}${parsed.pathname}` }
}

/** The App record as `viewerId` sees it. `addedBy` is null for a personal app (it is nobody's share). */
export const toApp = (viewerId: string, row: AppRow): App =>
  new App({
    id: row.id,
    name: row.name,
    origin: row.origin,
    iconUrl: row.iconUrl,
    storageScope: storageScope({ viewerId, appId: row.id, origin: row.origin, teamId: row.teamId, generation: row.generation }),
    url: row.url,
    projectId: row.projectId,
    // A project's name is its id, as in the inbox (InboxRepo: project_name = project_id).
    projectName: row.projectId,
    shareName: row.shareName,
    shareEmail: row.shareEmail,
    consentedAt: row.consentedAt,
    lastOpenedAt: row.lastOpenedAt,
    createdBy: row.userId,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    team: row.teamId === null ? null : new TeamSummary({ id: row.teamId, name: row.teamName ?? "" }),
    addedBy: row.teamId === null ? null : row.userId
  })

const notAdder = new Forbidden({ error: "Only the person who added the app may change, delete or move it." })

export class Apps extends Context.Service<Apps, {
  readonly list: (userId: string) => Effect.Effect<ReadonlyArray<App>>
  readonly teamApps: (userId: string, teamId: string) => Effect.Effect<ReadonlyArray<App>, NotFound>
  readonly get: (userId: string, id: string) => Effect.Effect<App, NotFound>
  /** Registers the app, or updates the person's app with the same origin + path (`created: false`). */
  readonly create: (userId: string, input: CreateAppRequest) => Effect.Effect<App, LimitReached>
  readonly update: (userId: string, id: string, input: UpdateAppRequest) => Effect.Effect<App, NotFound | Forbidden | Conflict>
  readonly remove: (userId: string, id: string) => Effect.Effect<void, NotFound | Forbidden>
  readonly revoke: (userId: string, id: string) => Effect.Effect<App, NotFound>
  readonly share: (
    actor: AuditActor & { readonly userId: string },
    id: string,
    teamId: string | null,
    notify: boolean
  ) => Effect.Effect<App, NotFound | Forbidden>
  /** Person API: the person's own consent and disclosure choices. */
  readonly consent: (userId: string, id: string) => Effect.Effect<App, NotFound>
  readonly preferences: (
    userId: string,
    id: string,
    patch: { readonly shareName?: boolean; readonly shareEmail?: boolean }
  ) => Effect.Effect<App, NotFound>
}>()("herald/Apps") {
  static readonly layerNoDeps = Layer.effect(Apps, Effect.gen(function*() {
    const repo = yield* AppsRepo
    const membership = yield* Membership
    const audit = yield* AuditTrail
    const outbox = yield* Outbox
    const inbox = yield* InboxWrites
    const targeting = yield* DeviceTargeting

    const visible = (userId: string, id: string, options?: { readonly forUpdate?: boolean }) =>
      Effect.flatMap(repo.find(userId, id, options), (row) => row === undefined ? Effect.fail(appNotFound) : Effect.succeed(row))
    /** The app when the caller added it: 404 when they cannot see it, 403 when they only see it. */
    const added = (userId: string, id: string) =>
      Effect.flatMap(visible(userId, id, { forUpdate: true }), (row) => row.userId === userId ? Effect.succeed(row) : Effect.fail(notAdder))
    const read = (userId: string, id: string) => Effect.map(visible(userId, id), (row) => toApp(userId, row))

    const create = Effect.fn("Apps.create")(function*(userId: string, input: CreateAppRequest) {
      const { origin, urlKey } = urlIdentity(input.url)
      return yield* repo.inTransaction(Effect.gen(function*() {
        // One create at a time per person: the count and the URL match hold until commit.
        yield* repo.lockPerson(userId)
        const existing = yield* repo.idByUrlKey(userId, urlKey)
        if (existing !== undefined) {
          const patch: AppPatch = {
            name: input.name,
            url: input.url,
            ...(input.iconUrl !== undefined ? { iconUrl: input.iconUrl } : {}),
            ...(input.projectId !== undefined ? { projectId: input.projectId } : {})
          }
          // Same origin + path, so consent stands.
          yield* repo.update(existing, patch, false).pipe(Effect.orDie)
          const row = yield* Effect.orDie(visible(userId, existing))
          return new AppUpdated({ ...toApp(userId, row) })
        }
        yield* checkLimit({ count: repo.countAdded(userId), limit: MAX_APPS, error: `A person adds at most ${MAX_APPS} web apps.` })
        const id = yield* makeId("app")
        yield* repo.insert({
          id,
          userId,
          name: input.name,
          url: input.url,
          origin,
          urlKey,
          iconUrl: input.iconUrl ?? null,
          projectId: input.projectId ?? null
        })
        return toApp(userId, yield* Effect.orDie(visible(userId, id)))
      }))
    })

    const update = Effect.fn("Apps.update")(function*(userId: string, id: string, input: UpdateAppRequest) {
      return yield* repo.inTransaction(Effect.gen(function*() {
        const row = yield* added(userId, id)
        let patch: AppPatch = { ...input }
        let newOrigin = false
        if (input.url !== undefined) {
          const { origin, urlKey } = urlIdentity(input.url)
          patch = { ...patch, origin, urlKey }
          newOrigin = origin !== row.origin
        }
        yield* repo.update(id, patch, newOrigin).pipe(
          Effect.catchTag("UrlTaken", () => Effect.fail(new Conflict({ error: "Another of your apps already has this URL." })))
        )
        return yield* read(userId, id)
      }))
    })

    const remove = Effect.fn("Apps.remove")(function*(userId: string, id: string) {
      yield* repo.inTransaction(Effect.gen(function*() {
        yield* added(userId, id)
        yield* repo.remove(id)
      }))
    })

    const setViewer = (userId: string, id: string, patch: Parameters<typeof repo.setViewer>[2]) =>
      repo.inTransaction(Effect.gen(function*() {
        yield* visible(userId, id, { forUpdate: true })
        yield* repo.setViewer(userId, id, patch)
        return yield* read(userId, id)
      }))

    /** The team's other members: an inbox item naming the app and a push per active device, in the caller's transaction. */
    const tellMembers = Effect.fn("Apps.tellMembers")(function*(row: AppRow, teamId: string, teamName: string, sharerId: string) {
      const { actorName, userIds } = yield* repo.teamAudience(teamId, sharerId)
      if (userIds.length === 0) return 0
      const devices = yield* targeting.activeOf(userIds)
      const itemId = yield* makeId("anot")
      const createdAt = new Date(yield* Clock.currentTimeMillis).toISOString()
      const title = `${actorName} shared ${row.name}`
      const body = `${row.name} is now one of ${teamName}'s apps. Open it to approve sign-in for yourself.`
      yield* inbox.add(userIds.map((userId) => ({
        userId,
        origin: "notification" as const,
        itemId,
        sourceName: teamName,
        title,
        body,
        url: row.url,
        appId: row.id,
        createdAt
      })))
      const message = alertMessage({ ref: `notification:${itemId}`, collapseId: itemId, title, body, url: row.url, imageUrl: row.iconUrl, threadId: null })
      const receipts = yield* outbox.toDevices({ devices, origin: "notification", itemId, purpose: "alert", message })
      return receipts.length
    })

    const share = Effect.fn("Apps.share")(function*(
      actor: AuditActor & { readonly userId: string },
      id: string,
      teamId: string | null,
      notify: boolean
    ) {
      const userId = actor.userId
      const { app, pushes } = yield* repo.inTransaction(Effect.gen(function*() {
        const row = yield* added(userId, id)
        // The caller must belong to the target (else 404, like any team route); the row lock keeps them in it.
        const target = teamId === null ? undefined : yield* membership.require(userId, teamId, "member", { forUpdate: true })
        if (row.teamId === teamId) return { app: toApp(userId, row), pushes: 0 }
        yield* repo.setTeam(id, teamId)
        const metadata = { appName: row.name, origin: row.origin }
        if (row.teamId !== null) {
          yield* audit.record(actor, { teamId: row.teamId, action: "app.unshared", targetType: "app", targetId: id, metadata })
        }
        let pushes = 0
        if (target !== undefined) {
          yield* audit.record(actor, { teamId: target.teamId, action: "app.shared", targetType: "app", targetId: id, metadata })
        }
        const moved = yield* Effect.orDie(visible(userId, id))
        if (target !== undefined && notify) pushes = yield* tellMembers(moved, target.teamId, moved.teamName ?? "", userId)
        return { app: toApp(userId, moved), pushes }
      }))
      // Committed: the outbox's worker sends them.
      if (pushes > 0) yield* outbox.wake
      return app
    })

    return Apps.of({
      list: (userId) => Effect.map(repo.list(userId), (rows) => rows.map((row) => toApp(userId, row))),
      teamApps: (userId, teamId) =>
        // Any member may read them: "member" is the least role, so only the 404 of a non-member remains.
        Effect.flatMap(membership.require(userId, teamId, "member").pipe(Effect.catchTag("Forbidden", Effect.die)), () =>
          Effect.map(repo.listTeam(userId, teamId), (rows) => rows.map((row) => toApp(userId, row)))),
      get: read,
      create,
      update,
      remove,
      revoke: (userId, id) => setViewer(userId, id, { consent: false }),
      share,
      consent: (userId, id) => setViewer(userId, id, { consent: true }),
      preferences: (userId, id, patch) => setViewer(userId, id, patch)
    })
  }))

  static readonly layer = Apps.layerNoDeps.pipe(Layer.provide(AppsRepo.layer))
}
