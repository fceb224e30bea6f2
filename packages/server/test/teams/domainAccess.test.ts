/**
 * Who may use the domain routes: one table of route × role (owner, admin,
 * member, outsider) × status, walked by one test over raw HTTP so the
 * statuses are the wire's (verify against a real DNS server on loopback);
 * then the scope each route requires.
 */
import { assert, layer } from "@effect/vitest"
import type { Scope } from "@herald/api"
import { Effect, Layer } from "effect"
import { randomBytes } from "node:crypto"
import { TestDns } from "../../../../test/support/dnsServer.ts"
import { agentOf, seedRoles } from "../../../../test/support/teams.ts"
import type { Someone } from "../../../../test/support/teams.ts"
import { personClient, rawFetch, testServerLayer } from "../../../../test/support/server.ts"

type Role = "owner" | "admin" | "member" | "outsider"
type Route = readonly [method: string, path: string, body: unknown]

const domainPath = "/api/agent/teams/{team}/domain"

/** Route, then the status for owner, admin, member, outsider. */
const table: ReadonlyArray<readonly [Route, Record<Role, number>]> = [
  [["POST", domainPath, { domain: "access-set.test" }], { owner: 200, admin: 403, member: 403, outsider: 404 }],
  [["DELETE", domainPath, undefined], { owner: 200, admin: 403, member: 403, outsider: 404 }],
  [["POST", `${domainPath}/verify`, undefined], { owner: 200, admin: 403, member: 403, outsider: 404 }]
]

const DomainServerLayer = Layer.unwrap(Effect.gen(function*() {
  const dns = yield* TestDns
  return testServerLayer({ HERALD_DNS_SERVERS: `${dns.host}:${dns.port}`, HERALD_DNS_TIMEOUT_MS: "300" })
})).pipe(Layer.provideMerge(TestDns.layer))

const secretOf = (someone: Someone, scopes: ReadonlyArray<Scope>) =>
  Effect.flatMap(personClient(someone.session), (app) => app.tokens.create({ payload: { name: "access", scopes: [...scopes] } })).pipe(
    Effect.map((created) => created.secret),
    Effect.orDie
  )

const call = (secret: string, [method, path, body]: Route, teamId: string) =>
  rawFetch(path.replace("{team}", teamId), {
    method,
    headers: { authorization: `Bearer ${secret}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })

layer(DomainServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("team domain access", (it) => {
  it.effect("route × role: the owner sets, clears and verifies the domain; admins and members 403, outsiders 404", () =>
    Effect.gen(function*() {
      const dns = yield* TestDns
      const roles = yield* seedRoles("team")
      const { teamId } = roles
      const ownerClient = yield* agentOf(roles.owner, ["teams:read", "teams:write"])
      const secrets: Record<Role, string> = {
        owner: yield* secretOf(roles.owner, ["teams:read", "teams:write"]),
        admin: yield* secretOf(roles.admin, ["teams:read", "teams:write"]),
        member: yield* secretOf(roles.member, ["teams:read", "teams:write"]),
        outsider: yield* secretOf(roles.outsider, ["teams:read", "teams:write"])
      }
      // What a team that does not exist answers: an outsider must get exactly this.
      const missingTeam = yield* call(secrets.owner, table[0]![0], "team_0000000000000000000000000")
      assert.strictEqual(missingTeam.status, 404)

      for (const [route, expected] of table) {
        for (const role of ["owner", "admin", "member", "outsider"] as const) {
          // A fresh pending domain with its record published per cell, so every route can succeed for the owner.
          yield* ownerClient.teamDomain.clear({ params: { id: teamId } })
          const team = yield* ownerClient.teamDomain.set({
            params: { id: teamId },
            payload: { domain: `access-${randomBytes(5).toString("hex")}.test` }
          })
          dns.setTxt(team.domainVerification!.host, [team.domainVerification!.value])
          const answer = yield* call(secrets[role], route, teamId)
          const cell = `${route[0]} ${route[1]} as ${role}`
          assert.strictEqual(answer.status, expected[role], `${cell}: ${JSON.stringify(answer.body)}`)
          if (answer.status === 404) assert.deepStrictEqual(answer.body, missingTeam.body, cell)
          if (answer.status === 403) assert.strictEqual((answer.body as { code: string }).code, "FORBIDDEN", cell)
        }
      }
    }))

  it.effect("each route needs teams:write (403 MISSING_SCOPE naming it)", () =>
    Effect.gen(function*() {
      const { owner, teamId } = yield* seedRoles("team")
      const readOnly = yield* secretOf(owner, ["teams:read"])
      for (const [route] of table) {
        const answer = yield* call(readOnly, route, teamId)
        assert.strictEqual(answer.status, 403, `${route[0]} ${route[1]}`)
        assert.strictEqual((answer.body as { code: string }).code, "MISSING_SCOPE")
        assert.deepStrictEqual((answer.body as { required: Array<string> }).required, ["teams:write"])
      }
    }))
})
