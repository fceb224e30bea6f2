/**
 * Who may use the device-group routes: one table of route × role (owner,
 * admin, member, outsider) × status, walked over raw HTTP so the statuses are
 * the wire's, each cell on a fresh group; then the scopes each route requires.
 */
import { layer } from "@effect/vitest"
import type { Scope } from "@herald/api"
import { Effect } from "effect"
import { callRoute, concealed, teamAccessTable, teamTokens } from "../../../../test/support/accessTable.ts"
import type { AccessRoute, TeamCell, TeamRole as Role } from "../../../../test/support/accessTable.ts"
import { TestServerLayer } from "../../../../test/support/server.ts"
import { seedRoles } from "../../../../test/support/teams.ts"

const rw: ReadonlyArray<Scope> = ["teams:read", "teams:write"]

interface Cell extends TeamCell {
  readonly teamId: string
  readonly groupId: string
  /** What a team that does not exist answers: an outsider must get exactly this. */
  readonly missingTeam: unknown
}

const groups = (c: Cell) => `/api/agent/teams/${c.teamId}/groups`
const oneGroup = (c: Cell) => `${groups(c)}/${c.groupId}`
const read: ReadonlyArray<Scope> = ["teams:read"]
const write: ReadonlyArray<Scope> = ["teams:write"]

const table: ReadonlyArray<AccessRoute<Cell, Role>> = [
  { name: "GET groups", method: "GET", path: groups, scopes: read, expect: { owner: 200, admin: 200, member: 200, outsider: 404 } },
  { name: "POST groups", method: "POST", path: groups, body: { name: "new" }, scopes: write, expect: { owner: 201, admin: 201, member: 403, outsider: 404 } },
  { name: "GET group", method: "GET", path: oneGroup, scopes: read, expect: { owner: 200, admin: 200, member: 200, outsider: 404 } },
  { name: "PATCH group", method: "PATCH", path: oneGroup, body: { name: "renamed" }, scopes: write, expect: { owner: 200, admin: 200, member: 403, outsider: 404 } },
  { name: "DELETE group", method: "DELETE", path: oneGroup, scopes: write, expect: { owner: 200, admin: 200, member: 403, outsider: 404 } },
  { name: "GET devices", method: "GET", path: (c) => `/api/agent/teams/${c.teamId}/devices`, scopes: read, expect: { owner: 200, admin: 200, member: 403, outsider: 404 } }
]

/** Four roles around one family with their tokens; each cell a fresh group, so a DELETE that succeeds never decides the next cell. */
const seeder = Effect.gen(function*() {
  const seeded = yield* seedRoles()
  const secrets = yield* teamTokens(seeded, rw)
  const base: Cell = { teamId: seeded.teamId, groupId: "", owner: seeded.owner, secrets, missingTeam: undefined }
  const missingTeam = (yield* callRoute(table[0]!, { ...base, teamId: "team_0000000000000000000000000" }, "owner", secrets.owner)).body
  return () =>
    Effect.map(callRoute(table[1]!, base, "owner", secrets.owner), (created) => ({ ...base, missingTeam, groupId: (created.body as { id: string }).id }))
})

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("device group access", (it) => {
  teamAccessTable(it, rw, {
    routes: table,
    seeder,
    check: (answer, cell) => concealed(answer, cell.missingTeam)
  })
})
