/**
 * The console's reads (issue 32) by index: a person's live activities from
 * every token (GET /api/app/activities), and the pages not yet resolved of
 * the teams a person belongs to (GET /api/app/pages), so neither walks a
 * table or a team's resolved history.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export default Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE INDEX live_activities_user_idx ON live_activities (user_id, created_at DESC)`
  yield* sql`CREATE INDEX pages_team_open_idx ON pages (team_id, id DESC) WHERE status <> 'resolved'`
})
