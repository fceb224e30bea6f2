/**
 * Who may use the on-call group routes: one table of route × role (owner,
 * admin, member, outsider) × status, walked over raw HTTP so the statuses are
 * the wire's, each cell on a fresh group with fresh overrides; then the
 * scopes each route requires.
 */
import { layer } from "@effect/vitest"
import type { Scope } from "@herald/api"
import { Effect } from "effect"
import { callRoute, concealed, teamAccessTable, teamRoles, teamTokens } from "../../../../test/support/accessTable.ts"
import type { AccessRoute, TeamCell, TeamRole as Role } from "../../../../test/support/accessTable.ts"
import { TestServerLayer } from "../../../../test/support/server.ts"
import { seedRoles } from "../../../../test/support/teams.ts"

const rw: ReadonlyArray<Scope> = ["oncall:read", "oncall:write"]

interface Cell extends TeamCell {
  readonly team: string
  readonly group: string
  /** The owner's override, and the member's own. */
  readonly override: string
  readonly memberOverride: string
  readonly userIds: Readonly<Record<Role, string>>
  /** What a team and a group that do not exist answer: an outsider must get exactly these. */
  readonly missingTeam: unknown
  readonly missingGroup: unknown
}

const teamGroups = (c: Cell) => `/api/agent/teams/${c.team}/oncall`
const oneGroup = (c: Cell) => `/api/agent/oncall/${c.group}`
const overrides = (c: Cell) => `${oneGroup(c)}/overrides`

const hour = 3_600_000
const soon = () => ({ startsAt: new Date(Date.now() + hour).toISOString(), endsAt: new Date(Date.now() + 2 * hour).toISOString() })
const rotation = (c: Cell) => ({
  members: [c.userIds.owner, c.userIds.admin, c.userIds.member],
  period: "daily",
  handoffAt: "09:00",
  timezone: "UTC",
  startsAt: "2026-01-01T09:00:00Z"
})
/** An override window for `who`: the caller, or someone else in the team (for the member the admin, for the others the member). */
const overrideOf = (who: "self" | "other") => (c: Cell, role: Role) => ({
  userId: who === "self" ? c.userIds[role] : c.userIds[role === "member" ? "admin" : "member"],
  ...soon()
})
const read: ReadonlyArray<Scope> = ["oncall:read"]
const write: ReadonlyArray<Scope> = ["oncall:write"]

const table: ReadonlyArray<AccessRoute<Cell, Role>> = [
  { name: "GET team groups", method: "GET", path: teamGroups, scopes: read, expect: { owner: 200, admin: 200, member: 200, outsider: 404 } },
  {
    name: "POST team group",
    method: "POST",
    path: teamGroups,
    body: (c: Cell) => ({ name: "new", rotation: rotation(c) }),
    scopes: write,
    expect: { owner: 201, admin: 201, member: 403, outsider: 404 }
  },
  { name: "GET group", method: "GET", path: oneGroup, scopes: read, expect: { owner: 200, admin: 200, member: 200, outsider: 404 } },
  { name: "PATCH group", method: "PATCH", path: oneGroup, body: { name: "renamed" }, scopes: write, expect: { owner: 200, admin: 200, member: 403, outsider: 404 } },
  { name: "DELETE group", method: "DELETE", path: oneGroup, scopes: write, expect: { owner: 200, admin: 200, member: 403, outsider: 404 } },
  // Putting oneself on call: every member may.
  { name: "override for oneself", method: "POST", path: overrides, body: overrideOf("self"), scopes: write, expect: { owner: 201, admin: 201, member: 201, outsider: 404 } },
  // Putting another member on call: admins and the owner only.
  { name: "override for another", method: "POST", path: overrides, body: overrideOf("other"), scopes: write, expect: { owner: 201, admin: 201, member: 403, outsider: 404 } },
  // The owner's override (someone else's for everyone but the owner).
  { name: "DELETE the owner's override", method: "DELETE", path: (c) => `${overrides(c)}/${c.override}`, scopes: write, expect: { owner: 200, admin: 200, member: 403, outsider: 404 } },
  // The member's own override.
  { name: "DELETE the member's override", method: "DELETE", path: (c) => `${overrides(c)}/${c.memberOverride}`, scopes: write, expect: { owner: 200, admin: 200, member: 200, outsider: 404 } },
  { name: "GET oncall/me", method: "GET", path: () => "/api/agent/oncall/me", scopes: read, expect: { owner: 200, admin: 200, member: 200, outsider: 200 } }
]

const idOf = (answer: { readonly body: unknown }) => (answer.body as { id: string }).id

/** Four roles around one family with their tokens; each cell a fresh group and overrides, so a DELETE that succeeds never decides the next cell. */
const seeder = Effect.gen(function*() {
  const seeded = yield* seedRoles()
  const secrets = yield* teamTokens(seeded, rw)
  const userIds = {} as Record<Role, string>
  for (const role of teamRoles) userIds[role] = seeded[role].person.id
  const blank: Cell = { team: seeded.teamId, group: "", override: "", memberOverride: "", owner: seeded.owner, userIds, secrets, missingTeam: undefined, missingGroup: undefined }
  const missingTeam = (yield* callRoute(table[0]!, { ...blank, team: "team_0000000000000000000000000" }, "owner", secrets.owner)).body
  const missingGroup = (yield* callRoute(table[2]!, { ...blank, group: "ocg_0000000000000000000000000" }, "owner", secrets.owner)).body
  return () =>
    Effect.gen(function*() {
      const group = idOf(yield* callRoute(table[1]!, blank, "owner", secrets.owner))
      const withGroup = { ...blank, group, missingTeam, missingGroup }
      const override = idOf(yield* callRoute(table[5]!, withGroup, "owner", secrets.owner))
      const memberOverride = idOf(yield* callRoute(table[5]!, withGroup, "member", secrets.member))
      return { ...withGroup, override, memberOverride }
    })
})

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("on-call group access", (it) => {
  teamAccessTable(it, rw, {
    routes: table,
    seeder,
    check: (answer, cell, route, role) => concealed(answer, route.path(cell, role) === teamGroups(cell) ? cell.missingTeam : cell.missingGroup)
  })
})
