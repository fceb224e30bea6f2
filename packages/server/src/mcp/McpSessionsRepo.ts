/**
 * SQL of the MCP sessions every node reads (migration 0022): a session by its
 * `Mcp-Session-Id`, the token (the grant, for OAuth) that opened it, what its
 * `initialize` negotiated — so a node whose MCP runtime does not hold the
 * session can resume it (McpSessions.ts) — and when it was last used. Times
 * are the caller's `Clock` (idle expiry is tested on a TestClock); a use never
 * moves `last_seen_at` back.
 *
 * `resume` is JSON text, not jsonb: the driver camel-cases the keys of JSON it
 * reads back, and a client's capabilities must come back as the client sent them.
 */
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"

const JsonObject = Schema.Record(Schema.String, Schema.Unknown)

/** What a node needs to open a session again in its own MCP runtime: the `initialize` the session answered. */
export const Resumable = Schema.Struct({
  /** The revision the session negotiated (the `MCP-Protocol-Version` its `initialize` answered). */
  protocolVersion: Schema.String,
  capabilities: JsonObject,
  clientInfo: JsonObject,
  /** The `_meta` of the `initialize` request, when it had one. */
  meta: Schema.optionalKey(JsonObject)
})
export type Resumable = typeof Resumable.Type

const ResumeText = Schema.NullOr(Schema.fromJsonString(Resumable))

const Id = Schema.Struct({ id: Schema.String })
const Use = Schema.Struct({ resume: ResumeText })

/** A `Clock` time as the `timestamptz` parameter the statements take. */
const at = (ms: number) => new Date(ms).toISOString()

export class McpSessionsRepo extends Context.Service<McpSessionsRepo, {
  /** Records a session just opened (a session id is minted once: a repeat takes the row over). */
  readonly open: (session: {
    readonly id: string
    readonly tokenId: string
    readonly resume: Resumable | undefined
    readonly nowMs: number
  }) => Effect.Effect<void>
  /** Deletes the token's sessions beyond the `keep` most recently used; answers their ids. */
  readonly evictBeyond: (tokenId: string, keep: number) => Effect.Effect<ReadonlyArray<string>>
  /**
   * A use of a session by a token: refreshes it and answers what resumes it, or
   * undefined when the token holds no such session (ended, another token's, never opened).
   */
  readonly use: (id: string, tokenId: string, nowMs: number) => Effect.Effect<{ readonly resume: Resumable | null } | undefined>
  /** Refreshes a session, whoever holds it. */
  readonly touch: (id: string, nowMs: number) => Effect.Effect<void>
  readonly remove: (id: string) => Effect.Effect<void>
  /** Deletes the sessions unused since `cutoffMs`; answers their ids. */
  readonly removeIdle: (cutoffMs: number) => Effect.Effect<ReadonlyArray<string>>
  /** Deletes the sessions of tokens (grants) revoked or expired; answers their ids. */
  readonly removeFallen: Effect.Effect<ReadonlyArray<string>>
  /** The ids among `ids` that are still sessions. */
  readonly existing: (ids: ReadonlyArray<string>) => Effect.Effect<ReadonlySet<string>>
}>()("herald/McpSessionsRepo") {
  static readonly layer = Layer.effect(McpSessionsRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const open = SqlSchema.void({
      Request: Schema.Struct({ id: Schema.String, tokenId: Schema.String, resume: ResumeText, now: Schema.String }),
      execute: ({ id, tokenId, resume, now }) =>
        sql`INSERT INTO mcp_sessions (id, token_id, resume, opened_at, last_seen_at)
            VALUES (${id}, ${tokenId}, ${resume}, ${now}::timestamptz, ${now}::timestamptz)
            ON CONFLICT (id) DO UPDATE SET token_id = EXCLUDED.token_id, resume = EXCLUDED.resume,
              opened_at = EXCLUDED.opened_at, last_seen_at = EXCLUDED.last_seen_at`
    })

    // Least recently used first out; on a tie, the one opened first.
    const evictBeyond = SqlSchema.findAll({
      Request: Schema.Struct({ tokenId: Schema.String, keep: Schema.Number }),
      Result: Id,
      execute: ({ tokenId, keep }) =>
        sql`DELETE FROM mcp_sessions WHERE id IN (
              SELECT id FROM mcp_sessions WHERE token_id = ${tokenId}
              ORDER BY last_seen_at DESC, seq DESC OFFSET ${keep})
            RETURNING id`
    })

    const use = SqlSchema.findOneOption({
      Request: Schema.Struct({ id: Schema.String, tokenId: Schema.String, now: Schema.String }),
      Result: Use,
      execute: ({ id, tokenId, now }) =>
        sql`UPDATE mcp_sessions SET last_seen_at = GREATEST(last_seen_at, ${now}::timestamptz)
            WHERE id = ${id} AND token_id = ${tokenId}
            RETURNING resume`
    })

    const touch = SqlSchema.void({
      Request: Schema.Struct({ id: Schema.String, now: Schema.String }),
      execute: ({ id, now }) =>
        sql`UPDATE mcp_sessions SET last_seen_at = GREATEST(last_seen_at, ${now}::timestamptz) WHERE id = ${id}`
    })

    const remove = SqlSchema.void({
      Request: Schema.String,
      execute: (id) => sql`DELETE FROM mcp_sessions WHERE id = ${id}`
    })

    const removeIdle = SqlSchema.findAll({
      Request: Schema.String,
      Result: Id,
      execute: (cutoff) => sql`DELETE FROM mcp_sessions WHERE last_seen_at < ${cutoff}::timestamptz RETURNING id`
    })

    // A token stands while it is neither revoked nor expired (a deleted one took its sessions with it).
    const removeFallen = SqlSchema.findAll({
      Request: Schema.Void,
      Result: Id,
      execute: () =>
        sql`DELETE FROM mcp_sessions s WHERE NOT EXISTS (
              SELECT 1 FROM api_tokens t
              WHERE t.id = s.token_id AND t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > now()))
            RETURNING id`
    })

    const existing = SqlSchema.findAll({
      Request: Schema.Array(Schema.String),
      Result: Id,
      execute: (ids) => sql`SELECT id FROM mcp_sessions WHERE id = ANY(${ids}::text[])`
    })

    const ids = (rows: ReadonlyArray<{ readonly id: string }>) => rows.map((row) => row.id)

    return McpSessionsRepo.of({
      open: ({ id, tokenId, resume, nowMs }) => Effect.orDie(open({ id, tokenId, resume: resume ?? null, now: at(nowMs) })),
      evictBeyond: (tokenId, keep) => evictBeyond({ tokenId, keep }).pipe(Effect.map(ids), Effect.orDie),
      use: (id, tokenId, nowMs) =>
        use({ id, tokenId, now: at(nowMs) }).pipe(
          Effect.map((row) => row._tag === "Some" ? row.value : undefined),
          Effect.orDie
        ),
      touch: (id, nowMs) => Effect.orDie(touch({ id, now: at(nowMs) })),
      remove: (id) => Effect.orDie(remove(id)),
      removeIdle: (cutoffMs) => removeIdle(at(cutoffMs)).pipe(Effect.map(ids), Effect.orDie),
      removeFallen: removeFallen(undefined).pipe(Effect.map(ids), Effect.orDie),
      existing: (candidates) =>
        candidates.length === 0
          ? Effect.succeed(new Set<string>())
          : existing(candidates).pipe(Effect.map((rows) => new Set(ids(rows))), Effect.orDie)
    })
  }))
}
