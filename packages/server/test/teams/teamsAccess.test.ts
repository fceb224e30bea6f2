/**
 * Who may call each team and membership route: one table of route × role
 * (owner, admin, member, outsider) × expected status, walked by one test over
 * HTTP, each cell on a freshly seeded team (a cell may delete or leave it);
 * and each route's scope, whose absence is 403 `MISSING_SCOPE`.
 */
import { assert, layer } from "@effect/vitest"
import type { Scope } from "@herald/api"
import { Effect } from "effect"
import { personClient, rawFetch, TestServerLayer } from "../../../../test/support/server.ts"
import { seedRoles } from "../../../../test/support/teams.ts"
import type { Someone } from "../../../../test/support/teams.ts"

type Role = "owner" | "admin" | "member" | "outsider"
const roles: ReadonlyArray<Role> = ["owner", "admin", "member", "outsider"]
type Seeded = Effect.Success<ReturnType<typeof seedRoles>>

interface Route {
  readonly name: string
  readonly scope: Scope
  readonly method: string
  readonly path: (seeded: Seeded) => string
  readonly body?: unknown
  readonly expect: Readonly<Record<Role, number>>
}

const team = (s: Seeded) => `/api/agent/teams/${s.teamId}`
const memberOf = (who: "owner" | "admin" | "member") => (s: Seeded) => `${team(s)}/members/${s[who].person.id}`

// decisions.md "Roles": a non-member gets 404 for the team and everything under it; a member lacking the role 403.
const table: ReadonlyArray<Route> = [
  { name: "list", scope: "teams:read", method: "GET", path: () => "/api/agent/teams", expect: { owner: 200, admin: 200, member: 200, outsider: 200 } },
  {
    name: "create a family",
    scope: "teams:write",
    method: "POST",
    path: () => "/api/agent/teams",
    body: { kind: "family", name: "Another" },
    expect: { owner: 201, admin: 201, member: 201, outsider: 201 }
  },
  {
    name: "create a team",
    scope: "teams:write",
    method: "POST",
    path: () => "/api/agent/teams",
    body: { kind: "team", name: "Acme" },
    expect: { owner: 403, admin: 403, member: 403, outsider: 403 }
  },
  { name: "get", scope: "teams:read", method: "GET", path: team, expect: { owner: 200, admin: 200, member: 200, outsider: 404 } },
  {
    name: "rename",
    scope: "teams:write",
    method: "PATCH",
    path: team,
    body: { name: "Renamed" },
    expect: { owner: 200, admin: 200, member: 403, outsider: 404 }
  },
  {
    name: "auto-join",
    scope: "teams:write",
    method: "PATCH",
    path: team,
    body: { autoJoinVerifiedDomain: true },
    expect: { owner: 200, admin: 403, member: 403, outsider: 404 }
  },
  {
    name: "retention",
    scope: "teams:write",
    method: "PATCH",
    path: team,
    body: { retentionDays: 90 },
    expect: { owner: 200, admin: 403, member: 403, outsider: 404 }
  },
  { name: "delete", scope: "teams:write", method: "DELETE", path: team, expect: { owner: 200, admin: 403, member: 403, outsider: 404 } },
  {
    name: "leave",
    scope: "teams:write",
    method: "POST",
    path: (s) => `${team(s)}/leave`,
    expect: { owner: 409, admin: 200, member: 200, outsider: 404 }
  },
  {
    name: "promote a member to admin",
    scope: "teams:write",
    method: "PATCH",
    path: memberOf("member"),
    body: { role: "admin" },
    expect: { owner: 200, admin: 403, member: 403, outsider: 404 }
  },
  {
    name: "transfer ownership to the admin",
    scope: "teams:write",
    method: "PATCH",
    path: memberOf("admin"),
    body: { role: "owner" },
    expect: { owner: 200, admin: 403, member: 403, outsider: 404 }
  },
  {
    name: "remove a member",
    scope: "teams:write",
    method: "DELETE",
    path: memberOf("member"),
    expect: { owner: 200, admin: 200, member: 403, outsider: 404 }
  },
  {
    name: "remove the admin",
    scope: "teams:write",
    method: "DELETE",
    path: memberOf("admin"),
    expect: { owner: 200, admin: 409, member: 403, outsider: 404 }
  },
  {
    name: "remove the owner",
    scope: "teams:write",
    method: "DELETE",
    path: memberOf("owner"),
    expect: { owner: 403, admin: 403, member: 403, outsider: 404 }
  }
]

/** A token's secret for an existing person. */
const tokenOf = (someone: Someone, scopes: ReadonlyArray<Scope>) =>
  Effect.flatMap(personClient(someone.session), (app) =>
    app.tokens.create({ payload: { name: "access table", scopes: [...scopes] } })).pipe(
      Effect.map((created) => created.secret),
      Effect.orDie
    )

const call = (route: Route, seeded: Seeded, secret: string) =>
  rawFetch(route.path(seeded), {
    method: route.method,
    headers: { authorization: `Bearer ${secret}`, ...(route.body === undefined ? {} : { "content-type": "application/json" }) },
    ...(route.body === undefined ? {} : { body: JSON.stringify(route.body) })
  })

layer(TestServerLayer, { excludeTestServices: true, timeout: "120 seconds" })("team routes: access", (it) => {
  it.effect("every route × role answers the table's status", () =>
    Effect.gen(function*() {
      const wrong: Array<string> = []
      for (const route of table) {
        for (const role of roles) {
          const seeded = yield* seedRoles()
          const response = yield* call(route, seeded, yield* tokenOf(seeded[role], ["teams:read", "teams:write"]))
          if (response.status !== route.expect[role]) {
            wrong.push(`${route.name} as ${role}: ${response.status} (expected ${route.expect[role]}) ${JSON.stringify(response.body)}`)
          }
        }
      }
      assert.deepStrictEqual(wrong, [])
    }))

  it.effect("each route needs its scope: without it, 403 MISSING_SCOPE naming it", () =>
    Effect.gen(function*() {
      for (const route of table) {
        const seeded = yield* seedRoles()
        const other: Scope = route.scope === "teams:read" ? "teams:write" : "teams:read"
        const response = yield* call(route, seeded, yield* tokenOf(seeded.owner, [other]))
        assert.strictEqual(response.status, 403, route.name)
        const body = response.body as { code: string; required: ReadonlyArray<string> }
        assert.strictEqual(body.code, "MISSING_SCOPE", route.name)
        assert.include(body.required, route.scope, route.name)
      }
    }))

  it.effect("a team the caller is not in answers exactly as one that does not exist", () =>
    Effect.gen(function*() {
      const seeded = yield* seedRoles()
      const secret = yield* tokenOf(seeded.outsider, ["teams:read", "teams:write"])
      const missing = { ...seeded, teamId: "team_00000000000000000000000000" }
      for (const route of table.filter((r) => r.path(seeded).startsWith(team(seeded)))) {
        const foreign = yield* call(route, seeded, secret)
        const absent = yield* call(route, missing, secret)
        assert.strictEqual(foreign.status, 404, route.name)
        assert.deepStrictEqual(foreign.body, absent.body, route.name)
      }
    }))
})
