/**
 * Reading the audit log as JSON over HTTP: who may (one access table),
 * newest-first keyset paging with a signed cursor (ties on one instant broken
 * by id), `from` inclusive, `to` exclusive, `action` exact, `limit` bounds, and
 * cursors that were altered or carried to other filters or teams. Entries are
 * set up in SQL; the writer (AuditTrail) is exercised by the routes' own tests.
 */
import { assert, layer } from "@effect/vitest"
import { AuditLogPage } from "@herald/api"
import type { Scope } from "@herald/api"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { agentOf, seedRoles } from "../../../../test/support/teams.ts"
import type { Someone } from "../../../../test/support/teams.ts"
import { personClient, rawFetch, TestServerLayer } from "../../../../test/support/server.ts"
import { makeId } from "../../src/lib/Ids.ts"

type Role = "owner" | "admin" | "member" | "outsider"

/** Writes one entry straight to the table, at `createdAt` (ISO), newest-first order decided by it. */
const insertEntry = (teamId: string, entry: { readonly action: string; readonly createdAt: string; readonly id?: string }) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const id = entry.id ?? (yield* makeId("aud"))
    yield* sql`INSERT INTO team_audit (id, team_id, action, target_type, target_id, metadata, created_at)
               VALUES (${id}, ${teamId}, ${entry.action}, 'team', ${teamId}, ${JSON.stringify({ n: id })}::jsonb,
                       ${entry.createdAt}::text::timestamptz)`
    return id
  }).pipe(Effect.orDie)

const secretOf = (someone: Someone, scopes: ReadonlyArray<Scope>) =>
  Effect.flatMap(personClient(someone.session), (app) => app.tokens.create({ payload: { name: "audit", scopes: [...scopes] } })).pipe(
    Effect.map((created) => created.secret),
    Effect.orDie
  )

const get = (secret: string, path: string) => rawFetch(path, { headers: { authorization: `Bearer ${secret}` } })

const asPage = (answer: AuditLogPage | string): AuditLogPage => {
  if (!(answer instanceof AuditLogPage)) throw new Error(`expected a JSON page, got ${String(answer).slice(0, 80)}`)
  return answer
}

const at = (minute: number) => new Date(Date.UTC(2026, 0, 10, 12, minute)).toISOString()

/** Route (JSON or CSV), then the status for owner, admin, member, outsider. */
const access: ReadonlyArray<readonly [string, Record<Role, number>]> = [
  ["/api/agent/teams/{team}/audit", { owner: 200, admin: 200, member: 403, outsider: 404 }],
  ["/api/agent/teams/{team}/audit?format=csv", { owner: 200, admin: 200, member: 403, outsider: 404 }]
]

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("audit log", (it) => {
  it.effect("route × role: admins and the owner read it (JSON and CSV), a member gets 403, an outsider 404", () =>
    Effect.gen(function*() {
      const roles = yield* seedRoles()
      yield* insertEntry(roles.teamId, { action: "team.renamed", createdAt: at(0) })
      const secrets: Record<Role, string> = {
        owner: yield* secretOf(roles.owner, ["teams:read"]),
        admin: yield* secretOf(roles.admin, ["teams:read"]),
        member: yield* secretOf(roles.member, ["teams:read"]),
        outsider: yield* secretOf(roles.outsider, ["teams:read"])
      }
      // A team that does not exist answers what an outsider gets.
      const missing = yield* get(secrets.owner, access[0]![0].replace("{team}", "team_0000000000000000000000000"))
      assert.strictEqual(missing.status, 404)
      for (const [path, expected] of access) {
        for (const role of ["owner", "admin", "member", "outsider"] as const) {
          const answer = yield* get(secrets[role], path.replace("{team}", roles.teamId))
          assert.strictEqual(answer.status, expected[role], `${role} GET ${path}`)
          if (expected[role] === 403) assert.strictEqual((answer.body as { code: string }).code, "FORBIDDEN")
          if (expected[role] === 404) assert.deepStrictEqual(answer.body, missing.body)
        }
      }
      // teams:read is the scope it needs.
      const unscoped = yield* get(yield* secretOf(roles.owner, ["apps:read"]), access[0]![0].replace("{team}", roles.teamId))
      assert.strictEqual(unscoped.status, 403)
    }))

  it.effect("pages newest first with a cursor: every entry once, ties on one instant ordered by id, null at the end", () =>
    Effect.gen(function*() {
      const { admin, teamId } = yield* seedRoles()
      const ids: Array<string> = []
      for (let minute = 0; minute < 7; minute++) ids.push(yield* insertEntry(teamId, { action: "member.joined", createdAt: at(minute) }))
      // Three entries at one instant (same microsecond): the cursor must split them without loss.
      for (const id of ["aud_tie_a", "aud_tie_b", "aud_tie_c"]) ids.push(yield* insertEntry(teamId, { id: `${id}_${teamId}`, action: "member.joined", createdAt: "2026-01-10T12:03:30.123456Z" }))
      const client = yield* agentOf(admin, ["teams:read"])

      const seen: Array<string> = []
      let cursor: string | undefined
      let pages = 0
      do {
        const page = asPage(yield* client.audit.list({ params: { id: teamId }, query: { limit: 3, ...(cursor === undefined ? {} : { cursor }) } }))
        assert.isAtMost(page.entries.length, 3)
        seen.push(...page.entries.map((e) => e.id))
        cursor = page.nextCursor ?? undefined
        pages++
      } while (cursor !== undefined && pages < 10)
      assert.strictEqual(pages, 4)

      const whole = asPage(yield* client.audit.list({ params: { id: teamId }, query: { limit: 200 } }))
      assert.deepStrictEqual(seen, whole.entries.map((e) => e.id))
      assert.strictEqual(new Set(seen).size, 10)
      // Newest first by time, then by id descending within one instant.
      const expected = whole.entries.map((e) => e.id)
      assert.deepStrictEqual(expected.slice(0, 3), ids.slice(4, 7).reverse())
      assert.deepStrictEqual(expected.slice(3, 6), [`aud_tie_c_${teamId}`, `aud_tie_b_${teamId}`, `aud_tie_a_${teamId}`])
      assert.deepStrictEqual(expected.slice(6), ids.slice(0, 4).reverse())
      assert.isNull(whole.nextCursor)
      // The default page is 50; the record carries the row's fields.
      const first = whole.entries[0]!
      assert.strictEqual(first.teamId, teamId)
      assert.strictEqual(first.action, "member.joined")
      assert.deepStrictEqual(first.metadata, { n: first.id })
      assert.strictEqual(first.createdAt, at(6))
    }))

  it.effect("from is inclusive, to exclusive, action exact; the filters combine with paging", () =>
    Effect.gen(function*() {
      const { owner, teamId } = yield* seedRoles()
      const e0 = yield* insertEntry(teamId, { action: "invite.created", createdAt: at(0) })
      const e1 = yield* insertEntry(teamId, { action: "member.joined", createdAt: at(1) })
      const e2 = yield* insertEntry(teamId, { action: "invite.created", createdAt: at(2) })
      const e3 = yield* insertEntry(teamId, { action: "invite.created", createdAt: at(3) })
      const client = yield* agentOf(owner, ["teams:read"])
      const ids = (query: { from?: string; to?: string; action?: string; limit?: number; cursor?: string }) =>
        Effect.map(client.audit.list({ params: { id: teamId }, query }), (answer) => asPage(answer))

      assert.deepStrictEqual((yield* ids({ from: at(1) })).entries.map((e) => e.id), [e3, e2, e1], "from includes an entry at exactly from")
      assert.deepStrictEqual((yield* ids({ to: at(2) })).entries.map((e) => e.id), [e1, e0], "to excludes an entry at exactly to")
      assert.deepStrictEqual((yield* ids({ from: at(1), to: at(3) })).entries.map((e) => e.id), [e2, e1])
      assert.deepStrictEqual((yield* ids({ action: "invite.created" })).entries.map((e) => e.id), [e3, e2, e0])
      assert.deepStrictEqual((yield* ids({ action: "invite" })).entries, [], "action is exact, not a prefix")

      // Paging keeps the filters.
      const first = yield* ids({ action: "invite.created", limit: 2 })
      assert.deepStrictEqual(first.entries.map((e) => e.id), [e3, e2])
      const second = yield* ids({ action: "invite.created", limit: 2, cursor: first.nextCursor! })
      assert.deepStrictEqual(second.entries.map((e) => e.id), [e0])
      assert.isNull(second.nextCursor)
    }))

  it.effect("limit 1–200 (0 and 201: 400); an altered cursor, or one carried to other filters or a team, is 400 BAD_REQUEST", () =>
    Effect.gen(function*() {
      const { owner, teamId } = yield* seedRoles()
      for (let minute = 0; minute < 3; minute++) yield* insertEntry(teamId, { action: "group.created", createdAt: at(minute) })
      const secret = yield* secretOf(owner, ["teams:read"])
      const base = `/api/agent/teams/${teamId}/audit`
      for (const limit of ["0", "201", "x"]) {
        const answer = yield* get(secret, `${base}?limit=${limit}`)
        assert.strictEqual(answer.status, 400, `limit=${limit}`)
      }
      for (const limit of ["1", "200"]) assert.strictEqual((yield* get(secret, `${base}?limit=${limit}`)).status, 200)
      assert.strictEqual((yield* get(secret, `${base}?from=yesterday`)).status, 400)

      const page = (yield* get(secret, `${base}?limit=1`)).body as { nextCursor: string }
      const cursor = page.nextCursor
      assert.isString(cursor)
      assert.strictEqual((yield* get(secret, `${base}?limit=1&cursor=${encodeURIComponent(cursor)}`)).status, 200)

      const [content, mac] = cursor.split(".") as [string, string]
      const altered = JSON.parse(Buffer.from(content, "base64url").toString("utf8")) as Record<string, string>
      altered.at = String(BigInt(altered.at!) + 60_000_000n)
      const forged = `${Buffer.from(JSON.stringify(altered)).toString("base64url")}.${mac}`
      const flipped = `${content}.${mac.startsWith("A") ? "B" : "A"}${mac.slice(1)}`
      for (const bad of [forged, flipped, "garbage", `${content}.`]) {
        const answer = yield* get(secret, `${base}?limit=1&cursor=${encodeURIComponent(bad)}`)
        assert.strictEqual(answer.status, 400, bad)
        assert.strictEqual((answer.body as { code: string }).code, "BAD_REQUEST")
      }
      // Bound to its filters and its team.
      const otherFilter = yield* get(secret, `${base}?limit=1&action=group.created&cursor=${encodeURIComponent(cursor)}`)
      assert.strictEqual(otherFilter.status, 400)
      const other = yield* seedRoles()
      const otherSecret = yield* secretOf(other.owner, ["teams:read"])
      const otherTeam = yield* get(otherSecret, `/api/agent/teams/${other.teamId}/audit?limit=1&cursor=${encodeURIComponent(cursor)}`)
      assert.strictEqual(otherTeam.status, 400)
    }))
})
