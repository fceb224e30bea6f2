/**
 * Who may do what to a shared web app, as one table walked by one test:
 * every app route (Agent and Person API) × the person who added it (a plain
 * member), the team's owner and admin (they see it, but did not add it), and
 * an outsider (who owns another team) × the expected status. Plus the scopes.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { makeAgent, TestServerLayer } from "../../../../test/support/server.ts"
import { seedTeam } from "../../../../test/support/teams.ts"
import { seedAppRoles, statusOf } from "./appsSupport.ts"

type Who = "adder" | "owner" | "admin" | "outsider"

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("web app access", (it) => {
  it.effect("route × role × status", () =>
    Effect.gen(function*() {
      const roles = yield* seedAppRoles
      const { teamId } = roles
      const people: Record<Who, typeof roles.member> = { adder: roles.member, owner: roles.owner, admin: roles.admin, outsider: roles.outsider }
      // The outsider belongs to a team of their own: membership elsewhere grants nothing here.
      yield* seedTeam({ owner: roles.outsider })
      const app = yield* roles.member.agent.apps.create({ payload: { name: "Ops", url: "https://ops.example.test/" } })
      yield* roles.member.agent.apps.share({ params: { id: app.id }, payload: { teamId, notify: false } })
      const id = app.id

      type Person = typeof roles.member
      const table: ReadonlyArray<readonly [string, (p: Person) => Effect.Effect<unknown, { readonly _tag: string }>, Record<Who, number>]> = [
        ["GET /apps/{id}", (p) => p.agent.apps.get({ params: { id } }), { adder: 200, owner: 200, admin: 200, outsider: 404 }],
        ["PATCH /apps/{id}", (p) => p.agent.apps.update({ params: { id }, payload: { name: "Ops!" } }), { adder: 200, owner: 403, admin: 403, outsider: 404 }],
        ["POST /apps/{id}/revoke", (p) => p.agent.apps.revoke({ params: { id } }), { adder: 200, owner: 200, admin: 200, outsider: 404 }],
        ["POST /apps/{id}/share", (p) => p.agent.apps.share({ params: { id }, payload: { teamId, notify: false } }), { adder: 200, owner: 403, admin: 403, outsider: 404 }],
        ["GET /teams/{id}/apps", (p) => p.agent.apps.teamApps({ params: { id: teamId } }), { adder: 200, owner: 200, admin: 200, outsider: 404 }],
        ["POST /api/app/apps/{id}/consent", (p) => p.app.apps.consent({ params: { id } }), { adder: 200, owner: 200, admin: 200, outsider: 404 }],
        ["PATCH /api/app/apps/{id}/preferences", (p) => p.app.apps.preferences({ params: { id }, payload: { shareEmail: true } }), { adder: 200, owner: 200, admin: 200, outsider: 404 }],
        // Last: the adder's delete removes the app.
        ["DELETE /apps/{id}", (p) => p.agent.apps.remove({ params: { id } }), { adder: 200, owner: 403, admin: 403, outsider: 404 }]
      ]
      const order: ReadonlyArray<Who> = ["outsider", "admin", "owner", "adder"]
      const got: Array<string> = []
      const want: Array<string> = []
      for (const [route, call, expected] of table) {
        for (const who of order) {
          want.push(`${route} as ${who}: ${expected[who]}`)
          got.push(`${route} as ${who}: ${yield* statusOf(call(people[who]))}`)
        }
      }
      assert.deepStrictEqual(got, want)
      // And afterwards it is gone for everyone.
      for (const who of order) assert.strictEqual(yield* statusOf(people[who].agent.apps.get({ params: { id } })), 404)
    }))

  it.effect("each route needs its scopes (403 MISSING_SCOPE)", () =>
    Effect.gen(function*() {
      const reader = yield* makeAgent(["apps:read"])
      const writer = yield* makeAgent(["apps:write"])
      const teamsOnly = yield* makeAgent(["teams:read"])
      const id = "app_0000000000000000000000000"
      const teamId = "team_0000000000000000000000000"
      const missing = (e: { readonly _tag: string }) => e._tag
      assert.strictEqual(missing(yield* Effect.flip(writer.client.apps.list())), "MissingScope")
      assert.strictEqual(missing(yield* Effect.flip(writer.client.apps.get({ params: { id } }))), "MissingScope")
      assert.strictEqual(missing(yield* Effect.flip(reader.client.apps.create({ payload: { name: "x", url: "https://x.example.test/" } }))), "MissingScope")
      assert.strictEqual(missing(yield* Effect.flip(reader.client.apps.update({ params: { id }, payload: {} }))), "MissingScope")
      assert.strictEqual(missing(yield* Effect.flip(reader.client.apps.remove({ params: { id } }))), "MissingScope")
      assert.strictEqual(missing(yield* Effect.flip(reader.client.apps.revoke({ params: { id } }))), "MissingScope")
      assert.strictEqual(missing(yield* Effect.flip(reader.client.apps.share({ params: { id }, payload: { teamId: null } }))), "MissingScope")
      // GET /teams/{id}/apps needs both.
      assert.strictEqual(missing(yield* Effect.flip(reader.client.apps.teamApps({ params: { id: teamId } }))), "MissingScope")
      assert.strictEqual(missing(yield* Effect.flip(teamsOnly.client.apps.teamApps({ params: { id: teamId } }))), "MissingScope")
    }))
})
