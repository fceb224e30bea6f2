/**
 * MCP sessions every node reads (issue 33): the session of the 2025 protocol
 * revisions (`Mcp-Session-Id`) moves from the memory of the node that answered
 * its `initialize` into the database, so any node behind a balancer answers
 * it, and it outlives that node's restart (mcp/McpSessions.ts).
 *
 * - `token_id`: the token (the grant, for OAuth) that opened it, the only one
 *   it answers; a deleted token takes its sessions with it.
 * - `resume`: what the `initialize` negotiated (revision, client capabilities
 *   and info), as JSON text, for a node whose MCP runtime does not hold the
 *   session to open it there; NULL: not resumable elsewhere.
 * - `last_seen_at`: its last use on any node; the per-token cap ends the least
 *   recently used (on a tie, the first opened: `seq`), the sweep the idle ones
 *   (both by the indexes below).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE mcp_sessions (
      id text PRIMARY KEY,
      seq bigint GENERATED ALWAYS AS IDENTITY,
      token_id text NOT NULL REFERENCES api_tokens (id) ON DELETE CASCADE,
      resume text,
      opened_at timestamptz NOT NULL,
      last_seen_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX mcp_sessions_token_idx ON mcp_sessions (token_id, last_seen_at)`
  yield* sql`CREATE INDEX mcp_sessions_seen_idx ON mcp_sessions (last_seen_at)`
})
