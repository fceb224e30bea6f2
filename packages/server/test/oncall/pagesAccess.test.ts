/**
 * Who may do what with pages, as one table walked by one test: every route of
 * pages (Agent API with a token of the person, Person API with their session)
 * for the owner, an admin, a member and an outsider of the page's team. Any
 * member may page, read, resolve, acknowledge and escalate; an outsider is
 * answered 404 as if nothing existed. Each row acts on a fresh page, so one
 * row's change (a resolve) never decides another's answer.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { personClient, rawFetch, TestServerLayer } from "../../../../test/support/server.ts"
import type { Someone } from "../../../../test/support/teams.ts"
import { agentOf, seedRoles } from "../../../../test/support/teams.ts"
import { seedGroup } from "./pagesSupport.ts"

type Role = "owner" | "admin" | "member" | "outsider"
type Face = "agent" | "person"

interface Row {
  readonly route: string
  readonly face: Face
  readonly method: "GET" | "POST"
  readonly path: (ids: { readonly teamId: string; readonly groupId: string; readonly pageId: string }) => string
  readonly body?: unknown
  readonly expect: Record<Role, number>
}

const everyMember = (ok: number): Record<Role, number> => ({ owner: ok, admin: ok, member: ok, outsider: 404 })

const table: ReadonlyArray<Row> = [
  { route: "POST /oncall/{groupId}/pages", face: "agent", method: "POST", path: (i) => `/api/agent/oncall/${i.groupId}/pages`, body: { title: "t" }, expect: everyMember(201) },
  { route: "GET /teams/{id}/pages", face: "agent", method: "GET", path: (i) => `/api/agent/teams/${i.teamId}/pages`, expect: everyMember(200) },
  { route: "GET /pages/{id}", face: "agent", method: "GET", path: (i) => `/api/agent/pages/${i.pageId}`, expect: everyMember(200) },
  { route: "POST /pages/{id}/resolve", face: "agent", method: "POST", path: (i) => `/api/agent/pages/${i.pageId}/resolve`, expect: everyMember(200) },
  { route: "POST /api/app/pages/{id}/acknowledge", face: "person", method: "POST", path: (i) => `/api/app/pages/${i.pageId}/acknowledge`, expect: everyMember(200) },
  { route: "POST /api/app/pages/{id}/escalate", face: "person", method: "POST", path: (i) => `/api/app/pages/${i.pageId}/escalate`, expect: everyMember(200) }
]

const tokenOf = (someone: Someone) =>
  Effect.flatMap(personClient(someone.session), (app) =>
    app.tokens.create({ payload: { name: "access", scopes: ["oncall:read", "oncall:write"] } })).pipe(Effect.map((t) => t.secret), Effect.orDie)

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("page access", (it) => {
  it.effect("routes × roles: members may act on their team's pages, outsiders get 404", () =>
    Effect.gen(function*() {
      const roles = yield* seedRoles()
      const { teamId } = roles
      const groupId = yield* seedGroup(teamId, [roles.member, roles.admin], [{ afterMinutes: 30, target: "next" }])
      const pager = yield* agentOf(roles.owner, ["oncall:write"])
      const tokens: Record<Role, string> = {
        owner: yield* tokenOf(roles.owner),
        admin: yield* tokenOf(roles.admin),
        member: yield* tokenOf(roles.member),
        outsider: yield* tokenOf(roles.outsider)
      }
      const failures: Array<string> = []
      for (const row of table) {
        for (const role of ["owner", "admin", "member", "outsider"] as const) {
          const { page } = yield* pager.pages.create({ params: { groupId }, headers: {}, payload: { title: `${row.route} ${role}` } })
          const bearer = row.face === "agent" ? tokens[role] : roles[role].session
          const response = yield* rawFetch(row.path({ teamId, groupId, pageId: page.id }), {
            method: row.method,
            headers: { authorization: `Bearer ${bearer}`, ...(row.body !== undefined ? { "content-type": "application/json" } : {}) },
            ...(row.body !== undefined ? { body: JSON.stringify(row.body) } : {})
          })
          if (response.status !== row.expect[role]) failures.push(`${row.route} as ${role}: ${response.status}, expected ${row.expect[role]}`)
        }
      }
      assert.deepStrictEqual(failures, [])
    }))

  it.effect("scopes: paging and resolving need oncall:write, reading oncall:read", () =>
    Effect.gen(function*() {
      const { member, owner, teamId } = yield* seedRoles()
      const groupId = yield* seedGroup(teamId, [member])
      const writer = yield* agentOf(owner, ["oncall:write"])
      const reader = yield* agentOf(owner, ["oncall:read"])
      const { page } = yield* writer.pages.create({ params: { groupId }, headers: {}, payload: { title: "t" } })
      assert.strictEqual((yield* Effect.flip(reader.pages.create({ params: { groupId }, headers: {}, payload: { title: "t" } })))._tag, "MissingScope")
      assert.strictEqual((yield* Effect.flip(reader.pages.resolve({ params: { id: page.id } })))._tag, "MissingScope")
      assert.strictEqual((yield* Effect.flip(writer.pages.get({ params: { id: page.id } })))._tag, "MissingScope")
      assert.strictEqual((yield* reader.pages.get({ params: { id: page.id } })).id, page.id)
    }))
})
