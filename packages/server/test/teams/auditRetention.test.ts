/**
 * The retention sweep: a pass deletes a team's audit entries older than its
 * `retentionDays` and keeps newer ones; a team with null keeps everything;
 * more old entries than one batch all go in one pass; other teams' entries
 * are untouched. Times are set in SQL relative to the database clock.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { seedTeam } from "../../../../test/support/teams.ts"
import { makePerson, TestServerLayer } from "../../../../test/support/server.ts"
import { AuditRetention, RETENTION_BATCH } from "../../src/teams/AuditRetention.ts"

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("audit retention", (it) => {
  it.effect("a pass deletes entries older than retentionDays, keeps newer ones and every entry of teams with null", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const owner = yield* makePerson("retention")
      const { teamId: kept30 } = yield* seedTeam({ owner })
      const { teamId: keepAll } = yield* seedTeam({ owner: yield* makePerson("keeper") })
      const { teamId: short } = yield* seedTeam({ owner: yield* makePerson("short") })
      yield* sql`UPDATE teams SET retention_days = 30 WHERE id = ${kept30}`
      yield* sql`UPDATE teams SET retention_days = 1 WHERE id = ${short}`

      const entry = (teamId: string, id: string, age: string) =>
        sql`INSERT INTO team_audit (id, team_id, action, target_type, created_at)
            VALUES (${id}, ${teamId}, 'team.updated', 'team', now() - ${age}::text::interval)`
      yield* entry(kept30, `aud_r_old_${kept30}`, "31 days")
      yield* entry(kept30, `aud_r_edge_${kept30}`, "30 days 1 minute")
      yield* entry(kept30, `aud_r_new_${kept30}`, "29 days 23 hours")
      yield* entry(kept30, `aud_r_today_${kept30}`, "1 minute")
      yield* entry(keepAll, `aud_r_ancient_${keepAll}`, "4000 days")
      yield* entry(keepAll, `aud_r_recent_${keepAll}`, "1 minute")
      // More than one batch of old entries, and one recent one.
      yield* sql`INSERT INTO team_audit (id, team_id, action, target_type, created_at)
                 SELECT 'aud_r_bulk_' || n || '_' || ${short}, ${short}, 'member.joined', 'member', now() - interval '2 days' - n * interval '1 second'
                 FROM generate_series(1, ${RETENTION_BATCH * 2 + 5}) AS n`
      yield* entry(short, `aud_r_fresh_${short}`, "23 hours")

      const retention = yield* AuditRetention
      // The count is not asserted: another test process's server may run a pass of its own meanwhile.
      yield* retention.sweep

      const left = (teamId: string) =>
        Effect.map(sql<{ id: string }>`SELECT id FROM team_audit WHERE team_id = ${teamId} ORDER BY created_at DESC`, (rows) =>
          rows.map((r) => r.id))
      assert.deepStrictEqual(yield* left(kept30), [`aud_r_today_${kept30}`, `aud_r_new_${kept30}`])
      assert.deepStrictEqual(yield* left(keepAll), [`aud_r_recent_${keepAll}`, `aud_r_ancient_${keepAll}`])
      assert.deepStrictEqual(yield* left(short), [`aud_r_fresh_${short}`])

      // A second pass finds nothing more to delete in these teams.
      yield* retention.sweep
      assert.deepStrictEqual(yield* left(kept30), [`aud_r_today_${kept30}`, `aud_r_new_${kept30}`])
      assert.deepStrictEqual(yield* left(keepAll), [`aud_r_recent_${keepAll}`, `aud_r_ancient_${keepAll}`])
    }).pipe(Effect.orDie))
})
