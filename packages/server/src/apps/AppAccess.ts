/**
 * Whether a person can see a web app: what other records check before they
 * name one (`appId` on a notification or a prompt). Visible means the person
 * added it, or it is shared with a team or family they belong to; anything
 * else — unknown or another account's — answers the same 404.
 */
import { NotFound } from "@herald/api"
import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"

export const appNotFound = new NotFound({ error: "App not found." })

export class AppAccess extends Context.Service<AppAccess, {
  /** Succeeds when `appId` is absent/null or an app the person can see; else 404. */
  readonly requireVisible: (userId: string, appId: string | null | undefined) => Effect.Effect<void, NotFound>
}>()("herald/AppAccess") {
  static readonly layer = Layer.effect(AppAccess, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const find = SqlSchema.findOneOption({
      Request: Schema.Struct({ userId: Schema.String, appId: Schema.String }),
      Result: Schema.Struct({ id: Schema.String }),
      execute: ({ appId, userId }) =>
        sql`SELECT a.id FROM apps a
            WHERE a.id = ${appId}
              AND (a.user_id = ${userId}
                   OR EXISTS (SELECT 1 FROM team_members m WHERE m.team_id = a.team_id AND m.user_id = ${userId}))`
    })
    return AppAccess.of({
      requireVisible: (userId, appId) =>
        appId === undefined || appId === null
          ? Effect.void
          : find({ userId, appId }).pipe(
            Effect.orDie,
            Effect.flatMap(Option.match({ onNone: () => Effect.fail(appNotFound), onSome: () => Effect.void }))
          )
    })
  }))
}
