/**
 * Who may call each invite route: one table of route × role (owner, admin,
 * member, outsider) × expected status, walked over HTTP with each cell on a
 * freshly seeded family; each route's scope, whose absence is 403
 * `MISSING_SCOPE`; and a team the caller is not in answers as one that does
 * not exist.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { accessTable, callRoute, teamRoles, tokenOf } from "../../../../test/support/accessTable.ts"
import type { AccessRoute, TeamRole as Role } from "../../../../test/support/accessTable.ts"
import { rawFetch, TestServerLayer } from "../../../../test/support/server.ts"
import { agentOf, seedRoles } from "../../../../test/support/teams.ts"
import { rw } from "./invitesSupport.ts"

type Seeded = Effect.Success<ReturnType<typeof seedRoles>>
/** A fresh family, and the invite the owner made for the route (for revoke). */
interface Cell {
  readonly seeded: Seeded
  readonly inviteId: string
}

const invites = (s: Seeded) => `/api/agent/teams/${s.teamId}/invites`

/** The role of the invite the owner makes before the call, by route name. */
const inviteFor: Readonly<Record<string, "admin" | "member">> = { "revoke a member invite": "member", "revoke an admin invite": "admin" }

// decisions.md "Roles": non-members 404; members lacking the role 403; only the owner invites (and revokes) admins.
const table: ReadonlyArray<AccessRoute<Cell, Role>> = [
  { name: "list", scopes: ["teams:read"], method: "GET", path: ({ seeded }) => invites(seeded), expect: { owner: 200, admin: 200, member: 403, outsider: 404 } },
  {
    name: "invite a member",
    scopes: ["teams:write"],
    method: "POST",
    path: ({ seeded }) => invites(seeded),
    body: { email: "new@example.test" },
    expect: { owner: 201, admin: 201, member: 403, outsider: 404 }
  },
  {
    name: "invite an admin",
    scopes: ["teams:write"],
    method: "POST",
    path: ({ seeded }) => invites(seeded),
    body: { email: "new@example.test", role: "admin" },
    expect: { owner: 201, admin: 403, member: 403, outsider: 404 }
  },
  {
    name: "revoke a member invite",
    scopes: ["teams:write"],
    method: "DELETE",
    path: ({ inviteId, seeded }) => `${invites(seeded)}/${inviteId}`,
    expect: { owner: 200, admin: 200, member: 403, outsider: 404 }
  },
  {
    name: "revoke an admin invite",
    scopes: ["teams:write"],
    method: "DELETE",
    path: ({ inviteId, seeded }) => `${invites(seeded)}/${inviteId}`,
    expect: { owner: 200, admin: 403, member: 403, outsider: 404 }
  }
]

/** A fresh family around four roles, and the invite the route needs (or none). */
const setUp = (route: AccessRoute<Cell, Role>) =>
  Effect.gen(function*() {
    const seeded = yield* seedRoles()
    const invite = inviteFor[route.name]
    if (invite === undefined) return { seeded, inviteId: "inv_00000000000000000000000000" }
    const owner = yield* agentOf(seeded.owner, rw)
    const created = yield* Effect.orDie(owner.teamInvites.create({
      params: { id: seeded.teamId },
      payload: { domain: "example.test", role: invite }
    }))
    return { seeded, inviteId: created.invite.id }
  })

layer(TestServerLayer, { excludeTestServices: true, timeout: "120 seconds" })("invite routes: access", (it) => {
  accessTable(it, {
    roles: teamRoles,
    routes: table,
    seeder: Effect.succeed(setUp),
    bearer: ({ seeded }, role) => tokenOf(seeded[role], rw),
    lacking: ({ seeded }, missing) => tokenOf(seeded.owner, rw.filter((s) => s !== missing))
  })

  it.effect("a team the caller is not in answers exactly as one that does not exist", () =>
    Effect.gen(function*() {
      for (const route of table) {
        const cell = yield* setUp(route)
        const secret = yield* tokenOf(cell.seeded.outsider, rw)
        const foreign = yield* callRoute(route, cell, "outsider", secret)
        const absent = yield* callRoute(route, { ...cell, seeded: { ...cell.seeded, teamId: "team_00000000000000000000000000" } }, "outsider", secret)
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
