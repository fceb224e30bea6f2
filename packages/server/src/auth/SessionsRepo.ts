/**
 * SQL of a person's sessions beyond authentication (auth/CredentialsRepo.ts finds
 * them by hash): opening a browser session with its expiry and user agent,
 * listing the live ones, revoking one of the person's own. Every statement is
 * scoped by `user_id`.
 */
import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"

export const SessionRow = Schema.Struct({
  id: Schema.String,
  createdAt: Schema.String,
  lastUsedAt: Schema.NullOr(Schema.String),
  expiresAt: Schema.NullOr(Schema.String),
  userAgent: Schema.NullOr(Schema.String)
})
export type SessionRow = typeof SessionRow.Type

export interface NewBrowserSession {
  readonly id: string
  readonly userId: string
  readonly tokenHash: string
  readonly userAgent: string | null
  readonly ttlSeconds: number
}

export class SessionsRepo extends Context.Service<SessionsRepo, {
  readonly insert: (session: NewBrowserSession) => Effect.Effect<void>
  /** Up to `limit` of the person's live sessions, most recently used first. */
  readonly listLive: (userId: string, limit: number) => Effect.Effect<ReadonlyArray<SessionRow>>
  /** Revokes the person's session; none when it is not theirs (or unknown). */
  readonly revokeOwn: (userId: string, sessionId: string) => Effect.Effect<Option.Option<string>>
}>()("herald/SessionsRepo") {
  static readonly layer = Layer.effect(SessionsRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const insert = SqlSchema.void({
      Request: Schema.Struct({
        id: Schema.String,
        userId: Schema.String,
        tokenHash: Schema.String,
        userAgent: Schema.NullOr(Schema.String),
        ttlSeconds: Schema.Int
      }),
      execute: (s) =>
        sql`INSERT INTO sessions (id, user_id, token_hash, user_agent, expires_at)
            VALUES (${s.id}, ${s.userId}, ${s.tokenHash}, ${s.userAgent}, now() + make_interval(secs => ${s.ttlSeconds}))`
    })

    const listLive = SqlSchema.findAll({
      Request: Schema.Struct({ userId: Schema.String, limit: Schema.Int }),
      Result: SessionRow,
      execute: ({ limit, userId }) =>
        sql`SELECT id, created_at, last_used_at, expires_at, user_agent FROM sessions
            WHERE user_id = ${userId} AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())
            ORDER BY coalesce(last_used_at, created_at) DESC, id DESC
            LIMIT ${limit}`
    })

    const revokeOwn = SqlSchema.findOneOption({
      Request: Schema.Struct({ userId: Schema.String, sessionId: Schema.String }),
      Result: Schema.Struct({ id: Schema.String }),
      execute: ({ sessionId, userId }) =>
        sql`UPDATE sessions SET revoked_at = coalesce(revoked_at, now())
            WHERE id = ${sessionId} AND user_id = ${userId} AND revoked_at IS NULL
            RETURNING id`
    })

    return SessionsRepo.of({
      insert: (s) => insert(s).pipe(Effect.orDie),
      listLive: (userId, limit) => listLive({ userId, limit }).pipe(Effect.orDie),
      revokeOwn: (userId, sessionId) => revokeOwn({ userId, sessionId }).pipe(Effect.map(Option.map((r) => r.id)), Effect.orDie)
    })
  }))
}
