/**
 * Who may call each team and membership route: one table of route × role
 * (owner, admin, member, outsider) × expected status, walked over HTTP with
 * each cell on a freshly seeded team (a cell may delete or leave it); each
 * route's scope, whose absence is 403 `MISSING_SCOPE`; and a team the caller
 * is not in answers as one that does not exist.
 */
import { assert, layer } from "@effect/vitest"
import type { Scope } from "@herald/api"
import { Effect } from "effect"
import { accessTable, callRoute, teamRoles, tokenOf } from "../../../../test/support/accessTable.ts"
import type { AccessRoute, TeamRole as Role } from "../../../../test/support/accessTable.ts"
import { TestServerLayer } from "../../../../test/support/server.ts"
import { seedRoles } from "../../../../test/support/teams.ts"

type Seeded = Effect.Success<ReturnType<typeof seedRoles>>
type Route = AccessRoute<Seeded, Role>

const rw: ReadonlyArray<Scope> = ["teams:read", "teams:write"]
const team = (s: Seeded) => `/api/agent/teams/${s.teamId}`
const memberOf = (who: "owner" | "admin" | "member") => (s: Seeded) => `${team(s)}/members/${s[who].person.id}`

const read: ReadonlyArray<Scope> = ["teams:read"]
const write: ReadonlyArray<Scope> = ["teams:write"]

// decisions.md "Roles": a non-member gets 404 for the team and everything under it; a member lacking the role 403.
const table: ReadonlyArray<Route> = [
  { name: "list", scopes: read, method: "GET", path: () => "/api/agent/teams", expect: { owner: 200, admin: 200, member: 200, outsider: 200 } },
  { name: "create a family", scopes: write, method: "POST", path: () => "/api/agent/teams", body: { kind: "family", name: "Another" }, expect: { owner: 201, admin: 201, member: 201, outsider: 201 } },
  { name: "create a team", scopes: write, method: "POST", path: () => "/api/agent/teams", body: { kind: "team", name: "Acme" }, expect: { owner: 403, admin: 403, member: 403, outsider: 403 } },
  { name: "get", scopes: read, method: "GET", path: team, expect: { owner: 200, admin: 200, member: 200, outsider: 404 } },
  { name: "rename", scopes: write, method: "PATCH", path: team, body: { name: "Renamed" }, expect: { owner: 200, admin: 200, member: 403, outsider: 404 } },
  { name: "auto-join", scopes: write, method: "PATCH", path: team, body: { autoJoinVerifiedDomain: true }, expect: { owner: 200, admin: 403, member: 403, outsider: 404 } },
  { name: "retention", scopes: write, method: "PATCH", path: team, body: { retentionDays: 90 }, expect: { owner: 200, admin: 403, member: 403, outsider: 404 } },
  { name: "delete", scopes: write, method: "DELETE", path: team, expect: { owner: 200, admin: 403, member: 403, outsider: 404 } },
  { name: "leave", scopes: write, method: "POST", path: (s) => `${team(s)}/leave`, expect: { owner: 409, admin: 200, member: 200, outsider: 404 } },
  { name: "promote a member to admin", scopes: write, method: "PATCH", path: memberOf("member"), body: { role: "admin" }, expect: { owner: 200, admin: 403, member: 403, outsider: 404 } },
  { name: "transfer ownership to the admin", scopes: write, method: "PATCH", path: memberOf("admin"), body: { role: "owner" }, expect: { owner: 200, admin: 403, member: 403, outsider: 404 } },
  { name: "remove a member", scopes: write, method: "DELETE", path: memberOf("member"), expect: { owner: 200, admin: 200, member: 403, outsider: 404 } },
  { name: "remove the admin", scopes: write, method: "DELETE", path: memberOf("admin"), expect: { owner: 200, admin: 409, member: 403, outsider: 404 } },
  { name: "remove the owner", scopes: write, method: "DELETE", path: memberOf("owner"), expect: { owner: 403, admin: 403, member: 403, outsider: 404 } }
]

layer(TestServerLayer, { excludeTestServices: true, timeout: "120 seconds" })("team routes: access", (it) => {
  accessTable(it, {
    roles: teamRoles,
    routes: table,
    seeder: Effect.succeed(() => seedRoles()),
    bearer: (seeded, role) => tokenOf(seeded[role], rw),
    lacking: (seeded, missing) => tokenOf(seeded.owner, rw.filter((s) => s !== missing))
  })

  it.effect("a team the caller is not in answers exactly as one that does not exist", () =>
    Effect.gen(function*() {
      const seeded = yield* seedRoles()
      const secret = yield* tokenOf(seeded.outsider, rw)
      const missing = { ...seeded, teamId: "team_00000000000000000000000000" }
      for (const route of table.filter((r) => r.path(seeded, "outsider").startsWith(team(seeded)))) {
        const foreign = yield* callRoute(route, seeded, "outsider", secret)
        const absent = yield* callRoute(route, missing, "outsider", secret)
        assert.strictEqual(foreign.status, 404, route.name)
        assert.deepStrictEqual(foreign.body, absent.body, route.name)
      }
    }))
})
