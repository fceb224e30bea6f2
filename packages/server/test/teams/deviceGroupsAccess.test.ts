/**
 * Who may use the device-group routes: one table of route × role (owner,
 * admin, member, outsider) × status, walked by one test over raw HTTP so the
 * statuses are the wire's; then the scopes each route requires.
 */
import { assert, layer } from "@effect/vitest"
import type { Scope } from "@herald/api"
import { Effect } from "effect"
import { seedRoles } from "../../../../test/support/teams.ts"
import type { Someone } from "../../../../test/support/teams.ts"
import { personClient, rawFetch, TestServerLayer } from "../../../../test/support/server.ts"

type Role = "owner" | "admin" | "member" | "outsider"
type Route = readonly [method: string, path: string, body: unknown]

const groups = "/api/agent/teams/{team}/groups"
const oneGroup = `${groups}/{group}`

/** Route, then the status for owner, admin, member, outsider. */
const table: ReadonlyArray<readonly [Route, Record<Role, number>]> = [
  [["GET", groups, undefined], { owner: 200, admin: 200, member: 200, outsider: 404 }],
  [["POST", groups, { name: "new" }], { owner: 201, admin: 201, member: 403, outsider: 404 }],
  [["GET", oneGroup, undefined], { owner: 200, admin: 200, member: 200, outsider: 404 }],
  [["PATCH", oneGroup, { name: "renamed" }], { owner: 200, admin: 200, member: 403, outsider: 404 }],
  [["DELETE", oneGroup, undefined], { owner: 200, admin: 200, member: 403, outsider: 404 }],
  [["GET", "/api/agent/teams/{team}/devices", undefined], { owner: 200, admin: 200, member: 403, outsider: 404 }]
]

const secretOf = (someone: Someone, scopes: ReadonlyArray<Scope>) =>
  Effect.flatMap(personClient(someone.session), (app) => app.tokens.create({ payload: { name: "access", scopes: [...scopes] } })).pipe(
    Effect.map((created) => created.secret),
    Effect.orDie
  )

const call = (secret: string, [method, path, body]: Route, teamId: string, groupId: string) =>
  rawFetch(path.replace("{team}", teamId).replace("{group}", groupId), {
    method,
    headers: { authorization: `Bearer ${secret}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("device group access", (it) => {
  it.effect("route × role: members read groups, admins and the owner change them and list devices, outsiders get 404", () =>
    Effect.gen(function*() {
      const roles = yield* seedRoles()
      const { teamId } = roles
      const secrets: Record<Role, string> = {
        owner: yield* secretOf(roles.owner, ["teams:read", "teams:write"]),
        admin: yield* secretOf(roles.admin, ["teams:read", "teams:write"]),
        member: yield* secretOf(roles.member, ["teams:read", "teams:write"]),
        outsider: yield* secretOf(roles.outsider, ["teams:read", "teams:write"])
      }
      // What a team that does not exist answers: an outsider must get exactly this.
      const missingTeam = yield* call(secrets.owner, table[0]![0], "team_0000000000000000000000000", "grp_x")
      assert.strictEqual(missingTeam.status, 404)

      for (const [route, expected] of table) {
        for (const role of ["owner", "admin", "member", "outsider"] as const) {
          // A fresh group per cell: a DELETE that succeeds must not change the next cell's answer.
          const created = yield* call(secrets.owner, ["POST", groups, { name: "cell" }], teamId, "")
          const groupId = (created.body as { id: string }).id
          const answer = yield* call(secrets[role], route, teamId, groupId)
          const cell = `${route[0]} ${route[1]} as ${role}`
          assert.strictEqual(answer.status, expected[role], `${cell}: ${JSON.stringify(answer.body)}`)
          if (answer.status === 404) assert.deepStrictEqual(answer.body, missingTeam.body, cell)
          if (answer.status === 403) assert.strictEqual((answer.body as { code: string }).code, "FORBIDDEN", cell)
        }
      }
    }))

  it.effect("reads need teams:read and changes teams:write (403 MISSING_SCOPE naming it)", () =>
    Effect.gen(function*() {
      const { owner, teamId } = yield* seedRoles()
      const full = yield* secretOf(owner, ["teams:read", "teams:write"])
      const created = yield* call(full, ["POST", groups, { name: "g" }], teamId, "")
      const groupId = (created.body as { id: string }).id
      const readOnly = yield* secretOf(owner, ["teams:read"])
      const writeOnly = yield* secretOf(owner, ["teams:write"])
      const cases: ReadonlyArray<readonly [Route, string, "teams:read" | "teams:write"]> = [
        [["GET", groups, undefined], writeOnly, "teams:read"],
        [["GET", oneGroup, undefined], writeOnly, "teams:read"],
        [["GET", "/api/agent/teams/{team}/devices", undefined], writeOnly, "teams:read"],
        [["POST", groups, { name: "x" }], readOnly, "teams:write"],
        [["PATCH", oneGroup, { name: "x" }], readOnly, "teams:write"],
        [["DELETE", oneGroup, undefined], readOnly, "teams:write"]
      ]
      for (const [route, secret, required] of cases) {
        const answer = yield* call(secret, route, teamId, groupId)
        assert.strictEqual(answer.status, 403, `${route[0]} ${route[1]}`)
        assert.strictEqual((answer.body as { code: string }).code, "MISSING_SCOPE")
        assert.deepStrictEqual((answer.body as { required: Array<string> }).required, [required])
      }
    }))
})
