/**
 * Who may call each invite route: one table of route × role (owner, admin,
 * member, outsider) × expected status, walked by one test over HTTP, each cell
 * on a freshly seeded family; each route's scope, whose absence is 403
 * `MISSING_SCOPE`; and a team the caller is not in answers as one that does
 * not exist.
 */
import { assert, layer } from "@effect/vitest"
import type { Scope } from "@herald/api"
import { Effect } from "effect"
import { personClient, rawFetch, TestServerLayer } from "../../../../test/support/server.ts"
import { agentOf, seedRoles } from "../../../../test/support/teams.ts"
import type { Someone } from "../../../../test/support/teams.ts"
import { rw } from "./invitesSupport.ts"

type Role = "owner" | "admin" | "member" | "outsider"
const roles: ReadonlyArray<Role> = ["owner", "admin", "member", "outsider"]
type Seeded = Effect.Success<ReturnType<typeof seedRoles>>

interface Route {
  readonly name: string
  readonly scope: Scope
  readonly method: string
  /** The path; `inviteId` is the one `invite` made in set-up. */
  readonly path: (seeded: Seeded, inviteId: string) => string
  readonly body?: unknown
  /** An invite the owner makes before the call (for revoke). */
  readonly invite?: "admin" | "member"
  readonly expect: Readonly<Record<Role, number>>
}

const invites = (s: Seeded) => `/api/agent/teams/${s.teamId}/invites`

// decisions.md "Roles": non-members 404; members lacking the role 403; only the owner invites (and revokes) admins.
const table: ReadonlyArray<Route> = [
  { name: "list", scope: "teams:read", method: "GET", path: invites, expect: { owner: 200, admin: 200, member: 403, outsider: 404 } },
  {
    name: "invite a member",
    scope: "teams:write",
    method: "POST",
    path: invites,
    body: { email: "new@example.test" },
    expect: { owner: 201, admin: 201, member: 403, outsider: 404 }
  },
  {
    name: "invite an admin",
    scope: "teams:write",
    method: "POST",
    path: invites,
    body: { email: "new@example.test", role: "admin" },
    expect: { owner: 201, admin: 403, member: 403, outsider: 404 }
  },
  {
    name: "revoke a member invite",
    scope: "teams:write",
    method: "DELETE",
    path: (s, inviteId) => `${invites(s)}/${inviteId}`,
    invite: "member",
    expect: { owner: 200, admin: 200, member: 403, outsider: 404 }
  },
  {
    name: "revoke an admin invite",
    scope: "teams:write",
    method: "DELETE",
    path: (s, inviteId) => `${invites(s)}/${inviteId}`,
    invite: "admin",
    expect: { owner: 200, admin: 403, member: 403, outsider: 404 }
  }
]

/** A token's secret for an existing person. */
const tokenOf = (someone: Someone, scopes: ReadonlyArray<Scope>) =>
  Effect.flatMap(personClient(someone.session), (app) =>
    app.tokens.create({ payload: { name: "access table", scopes: [...scopes] } })).pipe(
      Effect.map((created) => created.secret),
      Effect.orDie
    )

/** A fresh family around four roles, and the invite the route needs (or none). */
const setUp = (route: Route) =>
  Effect.gen(function*() {
    const seeded = yield* seedRoles()
    if (route.invite === undefined) return { seeded, inviteId: "inv_00000000000000000000000000" }
    const owner = yield* agentOf(seeded.owner, rw)
    const created = yield* Effect.orDie(owner.teamInvites.create({
      params: { id: seeded.teamId },
      payload: { domain: "example.test", role: route.invite }
    }))
    return { seeded, inviteId: created.invite.id }
  })

const call = (route: Route, seeded: Seeded, inviteId: string, secret: string) =>
  rawFetch(route.path(seeded, inviteId), {
    method: route.method,
    headers: { authorization: `Bearer ${secret}`, ...(route.body === undefined ? {} : { "content-type": "application/json" }) },
    ...(route.body === undefined ? {} : { body: JSON.stringify(route.body) })
  })

layer(TestServerLayer, { excludeTestServices: true, timeout: "120 seconds" })("invite routes: access", (it) => {
  it.effect("every route × role answers the table's status", () =>
    Effect.gen(function*() {
      const wrong: Array<string> = []
      for (const route of table) {
        for (const role of roles) {
          const { inviteId, seeded } = yield* setUp(route)
          const response = yield* call(route, seeded, inviteId, yield* tokenOf(seeded[role], rw))
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
        const { inviteId, seeded } = yield* setUp(route)
        const other: Scope = route.scope === "teams:read" ? "teams:write" : "teams:read"
        const response = yield* call(route, seeded, inviteId, yield* tokenOf(seeded.owner, [other]))
        assert.strictEqual(response.status, 403, route.name)
        const body = response.body as { code: string; required: ReadonlyArray<string> }
        assert.strictEqual(body.code, "MISSING_SCOPE", route.name)
        assert.include(body.required, route.scope, route.name)
      }
    }))

  it.effect("a team the caller is not in answers exactly as one that does not exist", () =>
    Effect.gen(function*() {
      for (const route of table) {
        const { inviteId, seeded } = yield* setUp(route)
        const secret = yield* tokenOf(seeded.outsider, rw)
        const foreign = yield* call(route, seeded, inviteId, secret)
        const absent = yield* call(route, { ...seeded, teamId: "team_00000000000000000000000000" }, inviteId, secret)
        assert.strictEqual(foreign.status, 404, route.name)
        assert.deepStrictEqual(foreign.body, absent.body, route.name)
      }
    }))

  it.effect("accepting is the person's: an API token on the Person API route is refused", () =>
    Effect.gen(function*() {
      const { outsider } = yield* seedRoles()
      const secret = yield* tokenOf(outsider, rw)
      const response = yield* rawFetch("/api/app/invites/accept", {
        method: "POST",
        headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
        body: JSON.stringify({ code: "whatever" })
      })
      assert.strictEqual(response.status, 401)
    }))
})
