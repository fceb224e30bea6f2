/**
 * SQL of the MCP session sweep: which of the tokens holding sessions still
 * stand (not revoked, not expired), asked only for the tokens the credential
 * cache no longer holds (McpSessions.ts), so a quiet node asks nothing.
 */
import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"

const Standing = Schema.Struct({ id: Schema.String })

export class McpSessionsRepo extends Context.Service<McpSessionsRepo, {
  /** The ids among `tokenIds` of tokens (grants) neither revoked nor expired. */
  readonly standing: (tokenIds: ReadonlyArray<string>) => Effect.Effect<ReadonlySet<string>>
}>()("herald/mcp/McpSessionsRepo") {
  static readonly layer = Layer.effect(McpSessionsRepo, Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const standing = SqlSchema.findAll({
      Request: Schema.Array(Schema.String),
      Result: Standing,
      execute: (ids) =>
        sql`SELECT id FROM api_tokens
            WHERE id = ANY(${ids}::text[]) AND revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())`
    })

    return McpSessionsRepo.of({
      standing: (tokenIds) =>
        tokenIds.length === 0
          ? Effect.succeed(new Set<string>())
          : standing(tokenIds).pipe(Effect.map((rows) => new Set(rows.map((row) => row.id))), Effect.orDie)
    })
  }))
}
