/**
 * Who may do what to a shared web app, as one table walked over HTTP: every
 * app route (Agent and Person API) × the person who added it (a plain
 * member), the team's owner and admin (they see it, but did not add it), and
 * an outsider (who owns another team) × the expected status, each cell on a
 * freshly added and shared app. Then the scopes each route needs.
 */
import { assert, layer } from "@effect/vitest"
import type { Scope } from "@herald/api"
import { Effect } from "effect"
import { randomBytes } from "node:crypto"
import { accessTable, tokenOf } from "../../../../test/support/accessTable.ts"
import type { AccessRoute } from "../../../../test/support/accessTable.ts"
import { TestServerLayer } from "../../../../test/support/server.ts"
import { seedTeam } from "../../../../test/support/teams.ts"
import { appScopes, seedAppRoles, statusOf } from "./appsSupport.ts"

type Who = "adder" | "owner" | "admin" | "outsider"
type Roles = Effect.Success<typeof seedAppRoles>

interface Cell {
  readonly teamId: string
  readonly appId: string
  readonly people: Readonly<Record<Who, Roles["member"]>>
}

const app = (c: Cell) => `/api/agent/apps/${c.appId}`
const everyone = (ok: number): Record<Who, number> => ({ adder: ok, owner: ok, admin: ok, outsider: ok })
const read: ReadonlyArray<Scope> = ["apps:read"]
const write: ReadonlyArray<Scope> = ["apps:write"]
/** A URL no app of the adder has yet: the same URL again would update that app (200) rather than add one. */
const freshUrl = () => `https://ops-${randomBytes(5).toString("hex")}.example.test/`

const table: ReadonlyArray<AccessRoute<Cell, Who>> = [
  { name: "GET /apps", method: "GET", path: () => "/api/agent/apps", scopes: read, expect: everyone(200) },
  { name: "POST /apps", method: "POST", path: () => "/api/agent/apps", body: () => ({ name: "x", url: freshUrl() }), scopes: write, expect: everyone(201) },
  { name: "GET /apps/{id}", method: "GET", path: app, scopes: read, expect: { adder: 200, owner: 200, admin: 200, outsider: 404 } },
  { name: "PATCH /apps/{id}", method: "PATCH", path: app, body: { name: "Ops!" }, scopes: write, expect: { adder: 200, owner: 403, admin: 403, outsider: 404 } },
  { name: "POST /apps/{id}/revoke", method: "POST", path: (c) => `${app(c)}/revoke`, scopes: write, expect: { adder: 200, owner: 200, admin: 200, outsider: 404 } },
  {
    name: "POST /apps/{id}/share",
    method: "POST",
    path: (c) => `${app(c)}/share`,
    body: (c: Cell) => ({ teamId: c.teamId, notify: false }),
    scopes: write,
    expect: { adder: 200, owner: 403, admin: 403, outsider: 404 }
  },
  // Needs both scopes.
  { name: "GET /teams/{id}/apps", method: "GET", path: (c) => `/api/agent/teams/${c.teamId}/apps`, scopes: ["apps:read", "teams:read"], expect: { adder: 200, owner: 200, admin: 200, outsider: 404 } },
  { name: "POST /api/app/apps/{id}/consent", face: "person", method: "POST", path: (c) => `/api/app/apps/${c.appId}/consent`, expect: { adder: 200, owner: 200, admin: 200, outsider: 404 } },
  {
    name: "PATCH /api/app/apps/{id}/preferences",
    face: "person",
    method: "PATCH",
    path: (c) => `/api/app/apps/${c.appId}/preferences`,
    body: { shareEmail: true },
    expect: { adder: 200, owner: 200, admin: 200, outsider: 404 }
  },
  { name: "DELETE /apps/{id}", method: "DELETE", path: app, scopes: write, expect: { adder: 200, owner: 403, admin: 403, outsider: 404 } }
]

/** A family whose member adds apps, and an outsider who owns a team of their own (membership elsewhere grants nothing here); each cell a fresh app shared with the family. */
const seeder = Effect.gen(function*() {
  const roles = yield* seedAppRoles
  yield* seedTeam({ owner: roles.outsider })
  const people = { adder: roles.member, owner: roles.owner, admin: roles.admin, outsider: roles.outsider }
  return () =>
    Effect.gen(function*() {
      const added = yield* roles.member.agent.apps.create({ payload: { name: "Ops", url: freshUrl() } })
      yield* roles.member.agent.apps.share({ params: { id: added.id }, payload: { teamId: roles.teamId, notify: false } })
      return { teamId: roles.teamId, appId: added.id, people }
    }).pipe(Effect.orDie)
})

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("web app access", (it) => {
  accessTable(it, {
    roles: ["outsider", "admin", "owner", "adder"],
    routes: table,
    seeder,
    bearer: (cell, who, face) => Effect.succeed(face === "agent" ? cell.people[who].secret : cell.people[who].session),
    scopeRole: "adder",
    lacking: (cell, missing) => tokenOf(cell.people.adder, appScopes.filter((s) => s !== missing))
  })

  it.effect("once the adder deletes it, the app is gone for everyone", () =>
    Effect.gen(function*() {
      const cell = yield* Effect.flatMap(seeder, (seed) => seed())
      yield* cell.people.adder.agent.apps.remove({ params: { id: cell.appId } })
      for (const who of ["outsider", "admin", "owner", "adder"] as const) {
        assert.strictEqual(yield* statusOf(cell.people[who].agent.apps.get({ params: { id: cell.appId } })), 404, who)
      }
    }))
})
