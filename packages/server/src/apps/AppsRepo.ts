/**
 * SQL of web apps and each viewer's own row (`app_viewers`: sign-in consent,
 * name/email disclosure, last opened). Every read is scoped by the viewer:
 * an app is visible to the person who added it and to the members of the
 * team or family it is shared with. Rows carry the viewer's membership
 * generation (`team_members.joined_at`) for `storageScope`.
 */
import { Context, Data, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlError, SqlSchema } from "effect/sql"
import { lockAccount, LockSpace } from "../db/AccountLocks.ts"

/** An app as one viewer sees it, before its `storageScope` is derived. */
export const AppRow = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  origin: Schema.String,
  iconUrl: Schema.NullOr(Schema.String),
  url: Schema.String,
  projectId: Schema.NullOr(Schema.String),
  /** Who added it (and registered it: only they may move it). */
  userId: Schema.String,
  teamId: Schema.NullOr(Schema.String),
  teamName: Schema.NullOr(Schema.String),
  createdAt: Schema.String,
  updatedAt: Schema.String,
  shareName: Schema.Boolean,
  shareEmail: Schema.Boolean,
  consentedAt: Schema.NullOr(Schema.String),
  lastOpenedAt: Schema.NullOr(Schema.String),
  /** The viewer's `joined_at` in the app's team (microseconds), null when not a member. */
  generation: Schema.NullOr(Schema.String)
})
export type AppRow = typeof AppRow.Type

export interface NewApp {
  readonly id: string
  readonly userId: string
  readonly name: string
  readonly url: string
  readonly origin: string
  readonly urlKey: string
  readonly iconUrl: string | null
  readonly projectId: string | null
}

export interface AppPatch {
  readonly name?: string
  readonly url?: string
  readonly origin?: string
  readonly urlKey?: string
  readonly iconUrl?: string | null
  readonly projectId?: string | null
}

export interface ViewerPatch {
  readonly shareName?: boolean
  readonly shareEmail?: boolean
  /** `true`: consented now; `false`: consent cleared. */
  readonly consent?: boolean
}

/** Another of the person's apps already has this origin + path. */
export class UrlTaken extends Data.TaggedError("UrlTaken")<{}> {}

const isUniqueViolation = (error: unknown) =>
  SqlError.isSqlError(error) && (error.reason.cause as { readonly code?: unknown } | undefined)?.code === "23505"

export class AppsRepo extends Context.Service<AppsRepo, {
  /** Apps the viewer can see, newest first. */
  readonly list: (viewerId: string) => Effect.Effect<ReadonlyArray<AppRow>>
  /** The apps shared with a team, newest first, as the viewer sees them. */
  readonly listTeam: (viewerId: string, teamId: string) => Effect.Effect<ReadonlyArray<AppRow>>
  /** One app the viewer can see; `forUpdate` locks it for the rest of the caller's transaction. */
  readonly find: (viewerId: string, id: string, options?: { readonly forUpdate?: boolean }) => Effect.Effect<AppRow | undefined>
  /** Takes the person's app lock (in the caller's transaction): their creates and URL changes go one by one. */
  readonly lockPerson: (userId: string) => Effect.Effect<void>
  readonly countAdded: (userId: string) => Effect.Effect<number>
  /** The person's app with this origin + path. */
  readonly idByUrlKey: (userId: string, urlKey: string) => Effect.Effect<string | undefined>
  readonly insert: (app: NewApp) => Effect.Effect<void>
  /** Updates the app's fields; `clearConsent` also clears every viewer's sign-in consent. */
  readonly update: (id: string, patch: AppPatch, clearConsent: boolean) => Effect.Effect<void, UrlTaken>
  readonly remove: (id: string) => Effect.Effect<void>
  readonly setTeam: (id: string, teamId: string | null) => Effect.Effect<void>
  /** Writes the viewer's own row (created with defaults when missing). */
  readonly setViewer: (viewerId: string, id: string, patch: ViewerPatch) => Effect.Effect<void>
  /** The team's members but `except`, and the name of `except`. */
  readonly teamAudience: (teamId: string, except: string) => Effect.Effect<{ readonly userIds: ReadonlyArray<string>; readonly actorName: string }>
  readonly inTransaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}>()("herald/AppsRepo") {
  static readonly layer = Layer.effect(AppsRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const select = (viewerId: string) =>
      sql`SELECT a.id, a.name, a.origin, a.icon_url, a.url, a.project_id, a.user_id, a.team_id, t.name AS team_name,
                 a.created_at, a.updated_at, COALESCE(v.share_name, false) AS share_name,
                 COALESCE(v.share_email, false) AS share_email, v.consented_at, v.last_opened_at,
                 (floor(extract(epoch FROM m.joined_at) * 1000000))::bigint::text AS generation
          FROM apps a
          LEFT JOIN teams t ON t.id = a.team_id
          LEFT JOIN team_members m ON m.team_id = a.team_id AND m.user_id = ${viewerId}
          LEFT JOIN app_viewers v ON v.app_id = a.id AND v.user_id = ${viewerId}`

    const visibleIds = (viewerId: string) =>
      sql`SELECT id FROM apps WHERE user_id = ${viewerId}
          UNION SELECT a2.id FROM apps a2 JOIN team_members m2 ON m2.team_id = a2.team_id WHERE m2.user_id = ${viewerId}`

    const list = SqlSchema.findAll({
      Request: Schema.String,
      Result: AppRow,
      execute: (viewerId) => sql`${select(viewerId)} WHERE a.id IN (${visibleIds(viewerId)}) ORDER BY a.id DESC`
    })
    const listTeam = SqlSchema.findAll({
      Request: Schema.Struct({ viewerId: Schema.String, teamId: Schema.String }),
      Result: AppRow,
      execute: ({ teamId, viewerId }) => sql`${select(viewerId)} WHERE a.team_id = ${teamId} ORDER BY a.id DESC`
    })
    const find = SqlSchema.findOneOption({
      Request: Schema.Struct({ viewerId: Schema.String, id: Schema.String, forUpdate: Schema.Boolean }),
      Result: AppRow,
      execute: ({ forUpdate, id, viewerId }) =>
        sql`${select(viewerId)} WHERE a.id = ${id} AND (a.user_id = ${viewerId} OR m.user_id IS NOT NULL)
            ${forUpdate ? sql`FOR UPDATE OF a` : sql``}`
    })
    const countAdded = SqlSchema.findOne({
      Request: Schema.String,
      Result: Schema.Struct({ n: Schema.Number }),
      execute: (userId) => sql`SELECT count(*)::int AS n FROM apps WHERE user_id = ${userId}`
    })
    const idByUrlKey = SqlSchema.findOneOption({
      Request: Schema.Struct({ userId: Schema.String, urlKey: Schema.String }),
      Result: Schema.Struct({ id: Schema.String }),
      execute: ({ urlKey, userId }) => sql`SELECT id FROM apps WHERE user_id = ${userId} AND url_key = ${urlKey}`
    })
    const audience = SqlSchema.findOne({
      Request: Schema.Struct({ teamId: Schema.String, except: Schema.String }),
      Result: Schema.Struct({ userIds: Schema.Array(Schema.String), actorName: Schema.NullOr(Schema.String) }),
      execute: ({ except, teamId }) =>
        sql`SELECT COALESCE((SELECT array_agg(user_id ORDER BY user_id) FROM team_members
                             WHERE team_id = ${teamId} AND user_id <> ${except}), ARRAY[]::text[]) AS user_ids,
                   (SELECT name FROM users WHERE id = ${except}) AS actor_name`
    })

    const update = (id: string, patch: AppPatch, clearConsent: boolean) =>
      Effect.gen(function*() {
        const changes = Object.keys(patch).length > 0 ? sql`${sql.update({ ...patch })}, updated_at = now()` : sql`updated_at = now()`
        yield* sql`UPDATE apps SET ${changes} WHERE id = ${id}`
        if (clearConsent) yield* sql`UPDATE app_viewers SET consented_at = NULL WHERE app_id = ${id}`
      }).pipe(
        Effect.catch((error) => isUniqueViolation(error) ? Effect.fail(new UrlTaken()) : Effect.die(error))
      )

    const setViewer = (viewerId: string, id: string, patch: ViewerPatch) => {
      const consentedAt = patch.consent === undefined ? null : patch.consent ? sql`now()` : null
      const updates = [
        ...(patch.shareName === undefined ? [] : [sql`share_name = EXCLUDED.share_name`]),
        ...(patch.shareEmail === undefined ? [] : [sql`share_email = EXCLUDED.share_email`]),
        ...(patch.consent === undefined ? [] : [sql`consented_at = EXCLUDED.consented_at`])
      ]
      return sql`INSERT INTO app_viewers (app_id, user_id, share_name, share_email, consented_at)
                 VALUES (${id}, ${viewerId}, ${patch.shareName ?? false}, ${patch.shareEmail ?? false}, ${consentedAt})
                 ON CONFLICT (app_id, user_id) DO ${
        updates.length === 0 ? sql`NOTHING` : sql`UPDATE SET ${sql.csv(updates)}`
      }`.pipe(Effect.asVoid, Effect.orDie)
    }

    return AppsRepo.of({
      list: (viewerId) => list(viewerId).pipe(Effect.orDie),
      listTeam: (viewerId, teamId) => listTeam({ viewerId, teamId }).pipe(Effect.orDie),
      find: (viewerId, id, options) =>
        find({ viewerId, id, forUpdate: options?.forUpdate === true }).pipe(Effect.map(Option.getOrUndefined), Effect.orDie),
      lockPerson: (userId) => lockAccount(sql, LockSpace.apps, userId).pipe(Effect.orDie),
      countAdded: (userId) => countAdded(userId).pipe(Effect.map((row) => row.n), Effect.orDie),
      idByUrlKey: (userId, urlKey) =>
        idByUrlKey({ userId, urlKey }).pipe(Effect.map((row) => Option.getOrUndefined(row)?.id), Effect.orDie),
      insert: (app) => sql`INSERT INTO apps ${sql.insert({ ...app })}`.pipe(Effect.asVoid, Effect.orDie),
      update,
      remove: (id) => sql`DELETE FROM apps WHERE id = ${id}`.pipe(Effect.asVoid, Effect.orDie),
      setTeam: (id, teamId) => sql`UPDATE apps SET team_id = ${teamId}, updated_at = now() WHERE id = ${id}`.pipe(Effect.asVoid, Effect.orDie),
      setViewer,
      teamAudience: (teamId, except) =>
        audience({ teamId, except }).pipe(
          Effect.map((row) => ({ userIds: row.userIds, actorName: row.actorName ?? "Someone" })),
          Effect.orDie
        ),
      inTransaction: (effect) => sql.withTransaction(effect).pipe(Effect.catchTag("SqlError", Effect.die))
    })
  }))
}
