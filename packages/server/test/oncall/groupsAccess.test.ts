/**
 * Who may use the on-call group routes: one table of route × role (owner,
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
type Ids = { readonly team: string; readonly group: string; readonly override: string; readonly memberOverride: string; readonly self: string; readonly other: string }

const teamGroups = "/api/agent/teams/{team}/oncall"
const oneGroup = "/api/agent/oncall/{group}"
const overrides = `${oneGroup}/overrides`

const hour = 3_600_000
const soon = () => ({ startsAt: new Date(Date.now() + hour).toISOString(), endsAt: new Date(Date.now() + 2 * hour).toISOString() })
const rotation = (members: ReadonlyArray<string>) => ({
  members,
  period: "daily",
  handoffAt: "09:00",
  timezone: "UTC",
  startsAt: "2026-01-01T09:00:00Z"
})

/** Route (its body may name the caller `{self}` or another member `{other}`), then the status for owner, admin, member, outsider. */
const table: ReadonlyArray<readonly [Route, Record<Role, number>]> = [
  [["GET", teamGroups, undefined], { owner: 200, admin: 200, member: 200, outsider: 404 }],
  [["POST", teamGroups, { name: "new", rotation: "{rotation}" }], { owner: 201, admin: 201, member: 403, outsider: 404 }],
  [["GET", oneGroup, undefined], { owner: 200, admin: 200, member: 200, outsider: 404 }],
  [["PATCH", oneGroup, { name: "renamed" }], { owner: 200, admin: 200, member: 403, outsider: 404 }],
  [["DELETE", oneGroup, undefined], { owner: 200, admin: 200, member: 403, outsider: 404 }],
  // Putting oneself on call: every member may.
  [["POST", overrides, { userId: "{self}", window: true }], { owner: 201, admin: 201, member: 201, outsider: 404 }],
  // Putting another member on call: admins and the owner only.
  [["POST", overrides, { userId: "{other}", window: true }], { owner: 201, admin: 201, member: 403, outsider: 404 }],
  // The owner's override (someone else's for everyone but the owner).
  [["DELETE", `${overrides}/{override}`, undefined], { owner: 200, admin: 200, member: 403, outsider: 404 }],
  // The member's own override.
  [["DELETE", `${overrides}/{memberOverride}`, undefined], { owner: 200, admin: 200, member: 200, outsider: 404 }],
  [["GET", "/api/agent/oncall/me", undefined], { owner: 200, admin: 200, member: 200, outsider: 200 }]
]

const secretOf = (someone: Someone, scopes: ReadonlyArray<Scope>) =>
  Effect.flatMap(personClient(someone.session), (app) => app.tokens.create({ payload: { name: "access", scopes: [...scopes] } })).pipe(
    Effect.map((created) => created.secret),
    Effect.orDie
  )

const fill = (body: unknown, ids: Ids, members: ReadonlyArray<string>): unknown => {
  if (body === undefined) return undefined
  const { window, ...rest } = body as Record<string, unknown>
  const out: Record<string, unknown> = { ...rest, ...(window === true ? soon() : {}) }
  if (out.userId === "{self}") out.userId = ids.self
  if (out.userId === "{other}") out.userId = ids.other
  if (out.rotation === "{rotation}") out.rotation = rotation(members)
  return out
}

const call = (secret: string, [method, path, body]: Route, ids: Ids, members: ReadonlyArray<string> = []) => {
  const filled = fill(body, ids, members)
  return rawFetch(
    path.replace("{team}", ids.team).replace("{group}", ids.group).replace("{override}", ids.override)
      .replace("{memberOverride}", ids.memberOverride),
    {
      method,
      headers: { authorization: `Bearer ${secret}`, ...(filled === undefined ? {} : { "content-type": "application/json" }) },
      ...(filled === undefined ? {} : { body: JSON.stringify(filled) })
    }
  )
}

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("on-call group access", (it) => {
  it.effect("route × role: members read and put themselves on call, admins and the owner manage, outsiders get 404", () =>
    Effect.gen(function*() {
      const roles = yield* seedRoles()
      const { teamId } = roles
      const rw: ReadonlyArray<Scope> = ["oncall:read", "oncall:write"]
      const secrets: Record<Role, string> = {
        owner: yield* secretOf(roles.owner, rw),
        admin: yield* secretOf(roles.admin, rw),
        member: yield* secretOf(roles.member, rw),
        outsider: yield* secretOf(roles.outsider, rw)
      }
      const userIds: Record<Role, string> = {
        owner: roles.owner.person.id,
        admin: roles.admin.person.id,
        member: roles.member.person.id,
        outsider: roles.outsider.person.id
      }
      const members = [userIds.owner, userIds.admin, userIds.member]
      const blank: Ids = { team: teamId, group: "", override: "", memberOverride: "", self: "", other: "" }

      // What a group that does not exist answers: an outsider must get exactly this on group routes.
      const missingGroup = yield* call(secrets.owner, table[2]![0], { ...blank, group: "ocg_0000000000000000000000000" })
      assert.strictEqual(missingGroup.status, 404)
      const missingTeam = yield* call(secrets.owner, table[0]![0], { ...blank, team: "team_0000000000000000000000000" })
      assert.strictEqual(missingTeam.status, 404)

      for (const [route, expected] of table) {
        for (const role of ["owner", "admin", "member", "outsider"] as const) {
          // A fresh group and overrides per cell: a DELETE that succeeds must not change the next cell's answer.
          const created = yield* call(secrets.owner, ["POST", teamGroups, { name: "cell", rotation: "{rotation}" }], blank, members)
          assert.strictEqual(created.status, 201, JSON.stringify(created.body))
          const group = (created.body as { id: string }).id
          const ids0 = { ...blank, group }
          const ownerOverride = yield* call(secrets.owner, ["POST", overrides, { userId: "{self}", window: true }], {
            ...ids0,
            self: userIds.owner
          })
          const memberOverride = yield* call(secrets.member, ["POST", overrides, { userId: "{self}", window: true }], {
            ...ids0,
            self: userIds.member
          })
          const ids: Ids = {
            ...ids0,
            override: (ownerOverride.body as { id: string }).id,
            memberOverride: (memberOverride.body as { id: string }).id,
            self: userIds[role],
            // Someone else in the team: for the member the admin, for the others the member.
            other: role === "member" ? userIds.admin : userIds.member
          }
          const answer = yield* call(secrets[role], route, ids, members)
          const cell = `${route[0]} ${route[1]} ${JSON.stringify(route[2] ?? "")} as ${role}`
          assert.strictEqual(answer.status, expected[role], `${cell}: ${JSON.stringify(answer.body)}`)
          if (answer.status === 404) {
            assert.deepStrictEqual(answer.body, route[1] === teamGroups ? missingTeam.body : missingGroup.body, cell)
          }
          if (answer.status === 403) assert.strictEqual((answer.body as { code: string }).code, "FORBIDDEN", cell)
        }
      }
    }))

  it.effect("reads need oncall:read and changes oncall:write (403 MISSING_SCOPE naming it)", () =>
    Effect.gen(function*() {
      const { owner, teamId } = yield* seedRoles()
      const full = yield* secretOf(owner, ["oncall:read", "oncall:write"])
      const blank: Ids = { team: teamId, group: "", override: "", memberOverride: "", self: owner.person.id, other: "" }
      const created = yield* call(full, ["POST", teamGroups, { name: "g", rotation: "{rotation}" }], blank, [owner.person.id])
      const ids0 = { ...blank, group: (created.body as { id: string }).id }
      const override = yield* call(full, ["POST", overrides, { userId: "{self}", window: true }], ids0)
      const ids = { ...ids0, override: (override.body as { id: string }).id }
      const readOnly = yield* secretOf(owner, ["oncall:read"])
      const writeOnly = yield* secretOf(owner, ["oncall:write"])
      const cases: ReadonlyArray<readonly [Route, string, "oncall:read" | "oncall:write"]> = [
        [["GET", teamGroups, undefined], writeOnly, "oncall:read"],
        [["GET", oneGroup, undefined], writeOnly, "oncall:read"],
        [["GET", "/api/agent/oncall/me", undefined], writeOnly, "oncall:read"],
        [["POST", teamGroups, { name: "x", rotation: "{rotation}" }], readOnly, "oncall:write"],
        [["PATCH", oneGroup, { name: "x" }], readOnly, "oncall:write"],
        [["DELETE", oneGroup, undefined], readOnly, "oncall:write"],
        [["POST", overrides, { userId: "{self}", window: true }], readOnly, "oncall:write"],
        [["DELETE", `${overrides}/{override}`, undefined], readOnly, "oncall:write"]
      ]
      for (const [route, secret, required] of cases) {
        const answer = yield* call(secret, route, ids, [owner.person.id])
        assert.strictEqual(answer.status, 403, `${route[0]} ${route[1]}`)
        assert.strictEqual((answer.body as { code: string }).code, "MISSING_SCOPE")
        assert.deepStrictEqual((answer.body as { required: Array<string> }).required, [required])
      }
    }))
})
