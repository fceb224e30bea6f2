/**
 * Who may do what with pages, as one table walked over HTTP: every route of
 * pages (Agent API with a token of the person, Person API with their session)
 * for the owner, an admin, a member and an outsider of the page's team. Any
 * member may page, read, resolve, acknowledge and escalate; an outsider is
 * answered 404 as if nothing existed. Each cell acts on a fresh page, so one
 * cell's change (a resolve) never decides another's answer. Then the scopes:
 * paging and resolving need oncall:write, reading oncall:read.
 */
import { layer } from "@effect/vitest"
import type { Scope } from "@herald/api"
import { Effect } from "effect"
import { accessTable, teamRoles, teamTokens, tokenOf } from "../../../../test/support/accessTable.ts"
import type { AccessRoute, TeamRole as Role } from "../../../../test/support/accessTable.ts"
import { TestServerLayer } from "../../../../test/support/server.ts"
import type { Someone } from "../../../../test/support/teams.ts"
import { agentOf, seedRoles } from "../../../../test/support/teams.ts"
import { seedGroup } from "./pagesSupport.ts"

const rw: ReadonlyArray<Scope> = ["oncall:read", "oncall:write"]

interface Cell {
  readonly teamId: string
  readonly groupId: string
  readonly pageId: string
  readonly people: Readonly<Record<Role, Someone>>
  readonly tokens: Readonly<Record<Role, string>>
}

const everyMember = (ok: number): Record<Role, number> => ({ owner: ok, admin: ok, member: ok, outsider: 404 })
const read: ReadonlyArray<Scope> = ["oncall:read"]
const write: ReadonlyArray<Scope> = ["oncall:write"]

const table: ReadonlyArray<AccessRoute<Cell, Role>> = [
  { name: "POST /oncall/{groupId}/pages", method: "POST", path: (c) => `/api/agent/oncall/${c.groupId}/pages`, body: { title: "t" }, scopes: write, expect: everyMember(201) },
  { name: "GET /teams/{id}/pages", method: "GET", path: (c) => `/api/agent/teams/${c.teamId}/pages`, scopes: read, expect: everyMember(200) },
  { name: "GET /pages/{id}", method: "GET", path: (c) => `/api/agent/pages/${c.pageId}`, scopes: read, expect: everyMember(200) },
  { name: "POST /pages/{id}/resolve", method: "POST", path: (c) => `/api/agent/pages/${c.pageId}/resolve`, scopes: write, expect: everyMember(200) },
  { name: "POST /api/app/pages/{id}/acknowledge", face: "person", method: "POST", path: (c) => `/api/app/pages/${c.pageId}/acknowledge`, expect: everyMember(200) },
  { name: "POST /api/app/pages/{id}/escalate", face: "person", method: "POST", path: (c) => `/api/app/pages/${c.pageId}/escalate`, expect: everyMember(200) }
]

/** Four roles around one family and an on-call group with an escalation step; each cell a fresh page. */
const seeder = Effect.gen(function*() {
  const people = yield* seedRoles()
  const { teamId } = people
  const groupId = yield* seedGroup(teamId, [people.member, people.admin], [{ afterMinutes: 30, target: "next" }])
  const pager = yield* agentOf(people.owner, ["oncall:write"])
  const tokens = yield* teamTokens(people, rw)
  return (route: AccessRoute<Cell, Role>, role: Role) =>
    Effect.map(
      Effect.orDie(pager.pages.create({ params: { groupId }, payload: { title: `${route.name} ${role}` } })),
      ({ page }): Cell => ({ teamId, groupId, pageId: page.id, people, tokens })
    )
})

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("page access", (it) => {
  accessTable(it, {
    roles: teamRoles,
    routes: table,
    seeder,
    bearer: (cell, role, face) => Effect.succeed(face === "agent" ? cell.tokens[role] : cell.people[role].session),
    lacking: (cell, missing) => tokenOf(cell.people.owner, rw.filter((s) => s !== missing))
  })
})
