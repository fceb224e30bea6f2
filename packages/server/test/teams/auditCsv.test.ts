/**
 * The audit log as CSV (`format=csv`): the header row in spec order, RFC 4180
 * quoting, formula-looking cells prefixed with `'`, the filters, the typed
 * client reading it as text, the OpenAPI showing both content types, and the
 * 50,000-row cap with `X-Audit-Truncated: true` only when more exist.
 */
import { assert, describe, it as plain, layer } from "@effect/vitest"
import type { AuditLogPage } from "@herald/api"
import { AUDIT_CSV_MAX_ROWS } from "@herald/api"
import type { Scope } from "@herald/api"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { agentOf, seedRoles } from "../../../../test/support/teams.ts"
import type { Someone } from "../../../../test/support/teams.ts"
import { personClient, rawFetch, TestServerLayer } from "../../../../test/support/server.ts"
import { csvCell } from "../../src/teams/AuditCsv.ts"

const HEADER = "id,teamId,actorUserId,actorName,actorTokenId,action,targetType,targetId,metadata,ip,userAgent,createdAt"

const secretOf = (someone: Someone, scopes: ReadonlyArray<Scope>) =>
  Effect.flatMap(personClient(someone.session), (app) => app.tokens.create({ payload: { name: "csv", scopes: [...scopes] } })).pipe(
    Effect.map((created) => created.secret),
    Effect.orDie
  )

const csvOf = (secret: string, teamId: string, extra = "") =>
  Effect.flatMap(
    rawFetch(`/api/agent/teams/${teamId}/audit?format=csv${extra}`, { headers: { authorization: `Bearer ${secret}` } }),
    (answer) => Effect.succeed({ ...answer, text: answer.body as string })
  )

/** Lines of a CSV body without quoted newlines (the generated rows have none). */
const lines = (text: string) => {
  assert.isTrue(text.endsWith("\r\n"), "every line ends in CRLF")
  return text.slice(0, -2).split("\r\n")
}

describe("csvCell", () => {
  plain("guards formula starts and quotes per RFC 4180", () => {
    const cases: ReadonlyArray<readonly [string | null, string]> = [
      [null, ""],
      ["plain", "plain"],
      ["=1+1", "'=1+1"],
      ["+1", "'+1"],
      ["-1", "'-1"],
      ["@SUM(A1)", "'@SUM(A1)"],
      ["\tx", "'\tx"],
      ["\rx", "\"'\rx\""],
      ["a,b", "\"a,b\""],
      ["say \"hi\"", "\"say \"\"hi\"\"\""],
      ["two\nlines", "\"two\nlines\""],
      ["=a,\"b\"", "\"'=a,\"\"b\"\"\""],
      ["a=b", "a=b"]
    ]
    for (const [value, expected] of cases) assert.strictEqual(csvCell(value), expected, JSON.stringify(value))
  })
})

layer(TestServerLayer, { excludeTestServices: true, timeout: "120 seconds" })("audit log CSV", (it) => {
  it.effect("header in spec order, formula cells prefixed with ', commas, quotes and newlines quoted; filters apply", () =>
    Effect.gen(function*() {
      const { owner, teamId } = yield* seedRoles()
      const sql = yield* SqlClient.SqlClient
      yield* sql`INSERT INTO team_audit (id, team_id, actor_user_id, actor_name, actor_token_id, action, target_type, target_id,
                                         metadata, ip, user_agent, created_at)
                 VALUES ('aud_csv_formula', ${teamId}, 'usr_x', '=cmd()', NULL, 'member.joined', 'member', '-2+3',
                         ${JSON.stringify({ note: "a,b \"q\"\nline", cmd: "=x" })}::jsonb, '@10.0.0.1', '+ua', '2026-02-01T10:00:00.000Z'),
                        ('aud_csv_plain', ${teamId}, NULL, 'Ann, "the admin"', 'tok_1', 'team.renamed', 'team', ${teamId},
                         NULL, NULL, 'line1' || chr(10) || 'line2', '2026-02-01T09:00:00.000Z')`.pipe(Effect.orDie)
      const secret = yield* secretOf(owner, ["teams:read"])

      const answer = yield* csvOf(secret, teamId)
      assert.strictEqual(answer.status, 200)
      assert.strictEqual(answer.headers.get("content-type"), "text/csv; charset=utf-8")
      assert.isNull(answer.headers.get("x-audit-truncated"))
      assert.strictEqual(
        answer.text,
        `${HEADER}\r\n` +
          `aud_csv_formula,${teamId},usr_x,'=cmd(),,member.joined,member,'-2+3,` +
          `"{""cmd"":""=x"",""note"":""a,b \\""q\\""\\nline""}",'@10.0.0.1,'+ua,2026-02-01T10:00:00.000Z\r\n` +
          `aud_csv_plain,${teamId},,"Ann, ""the admin""",tok_1,team.renamed,team,${teamId},,,"line1\nline2",` +
          `2026-02-01T09:00:00.000Z\r\n`
      )

      const filtered = yield* csvOf(secret, teamId, "&action=team.renamed")
      assert.deepStrictEqual(lines(filtered.text).map((line) => line.split(",")[0]), ["id", "aud_csv_plain"])
      const ranged = yield* csvOf(secret, teamId, `&from=${encodeURIComponent("2026-02-01T10:00:00Z")}`)
      assert.deepStrictEqual(lines(ranged.text).map((line) => line.split(",")[0]), ["id", "aud_csv_formula"])

      // The typed client reads the CSV alternative as text and the default as the JSON page.
      const client = yield* agentOf(owner, ["teams:read"])
      const text = yield* client.audit.list({ params: { id: teamId }, query: { format: "csv" } })
      assert.strictEqual(text, answer.text)
      const page = (yield* client.audit.list({ params: { id: teamId } })) as AuditLogPage
      assert.deepStrictEqual(page.entries.map((e) => e.id), ["aud_csv_formula", "aud_csv_plain"])

      // One operation, two documented content types.
      const doc = (yield* rawFetch("/api/agent/openapi.json")).body as {
        paths: Record<string, { get: { responses: Record<string, { content: Record<string, unknown> }> } }>
      }
      const responses = doc.paths["/api/agent/teams/{id}/audit"]!.get.responses
      assert.includeMembers(Object.keys(responses["200"]!.content), ["application/json", "text/csv"])
      assert.includeMembers(Object.keys(responses), ["400", "401", "403", "404"])
    }))

  it.effect("more than 50,000 matching entries: 50,000 rows and X-Audit-Truncated: true; exactly 50,000: no flag", () =>
    Effect.gen(function*() {
      const { admin, teamId } = yield* seedRoles()
      const sql = yield* SqlClient.SqlClient
      // One statement, distinct instants a second apart (newest is n = 1).
      yield* sql`INSERT INTO team_audit (id, team_id, action, target_type, target_id, created_at)
                 SELECT 'aud_bulk_' || lpad(n::text, 6, '0'), ${teamId}, 'member.joined', 'member', NULL,
                        timestamptz '2026-03-01T00:00:00Z' - n * interval '1 second'
                 FROM generate_series(1, ${AUDIT_CSV_MAX_ROWS + 1}) AS n`.pipe(Effect.orDie)
      const secret = yield* secretOf(admin, ["teams:read"])

      const over = yield* csvOf(secret, teamId)
      assert.strictEqual(over.status, 200)
      assert.strictEqual(over.headers.get("x-audit-truncated"), "true")
      const overLines = lines(over.text)
      assert.strictEqual(overLines[0], HEADER)
      assert.strictEqual(overLines.length - 1, AUDIT_CSV_MAX_ROWS)
      // Newest first, in order, none repeated across the streamed pages; the oldest one is left out.
      assert.isTrue(overLines[1]!.startsWith("aud_bulk_000001,"))
      assert.isTrue(overLines[AUDIT_CSV_MAX_ROWS]!.startsWith("aud_bulk_050000,"))
      const ids = overLines.slice(1).map((line) => line.split(",")[0])
      assert.strictEqual(new Set(ids).size, AUDIT_CSV_MAX_ROWS)
      assert.isTrue(ids.every((id, i) => id === `aud_bulk_${String(i + 1).padStart(6, "0")}`))

      // The documented way on: `to` = the last row's createdAt gives the rest.
      const lastCreatedAt = overLines[AUDIT_CSV_MAX_ROWS]!.split(",").at(-1)!
      const rest = yield* csvOf(secret, teamId, `&to=${encodeURIComponent(lastCreatedAt)}`)
      assert.deepStrictEqual(lines(rest.text).slice(1).map((line) => line.split(",")[0]), ["aud_bulk_050001"])
      assert.isNull(rest.headers.get("x-audit-truncated"))

      yield* sql`DELETE FROM team_audit WHERE id = 'aud_bulk_050001'`.pipe(Effect.orDie)
      const exact = yield* csvOf(secret, teamId)
      assert.isNull(exact.headers.get("x-audit-truncated"))
      assert.strictEqual(lines(exact.text).length - 1, AUDIT_CSV_MAX_ROWS)
    }))
})
