/**
 * Who may use the domain routes: one table of route × role (owner, admin,
 * member, outsider) × status, walked over raw HTTP so the statuses are the
 * wire's, each cell on a fresh pending domain (verify against a real DNS
 * server on loopback); then the scope each route requires.
 */
import { layer } from "@effect/vitest"
import type { Scope } from "@herald/api"
import { Effect, Layer } from "effect"
import { randomBytes } from "node:crypto"
import { TestDns } from "../../../../test/support/dnsServer.ts"
import { callRoute, concealed, teamAccessTable, teamTokens } from "../../../../test/support/accessTable.ts"
import type { AccessRoute, TeamCell, TeamRole as Role } from "../../../../test/support/accessTable.ts"
import { agentOf, seedRoles } from "../../../../test/support/teams.ts"
import { testServerLayer } from "../../../../test/support/server.ts"

const rw: ReadonlyArray<Scope> = ["teams:read", "teams:write"]

interface Cell extends TeamCell {
  readonly teamId: string
  /** What a team that does not exist answers: an outsider must get exactly this. */
  readonly missingTeam: unknown
}

const domainPath = (c: Cell) => `/api/agent/teams/${c.teamId}/domain`
const write: ReadonlyArray<Scope> = ["teams:write"]

const table: ReadonlyArray<AccessRoute<Cell, Role>> = [
  { name: "POST domain", method: "POST", path: domainPath, body: { domain: "access-set.test" }, scopes: write, expect: { owner: 200, admin: 403, member: 403, outsider: 404 } },
  { name: "DELETE domain", method: "DELETE", path: domainPath, scopes: write, expect: { owner: 200, admin: 403, member: 403, outsider: 404 } },
  { name: "POST domain/verify", method: "POST", path: (c) => `${domainPath(c)}/verify`, scopes: write, expect: { owner: 200, admin: 403, member: 403, outsider: 404 } }
]

const DomainServerLayer = Layer.unwrap(Effect.gen(function*() {
  const dns = yield* TestDns
  return testServerLayer({ HERALD_DNS_SERVERS: `${dns.host}:${dns.port}`, HERALD_DNS_TIMEOUT_MS: "300" })
})).pipe(Layer.provideMerge(TestDns.layer))

/** A team around four roles with their tokens; each cell a fresh pending domain with its record published, so every route can succeed for the owner. */
const seeder = Effect.gen(function*() {
  const dns = yield* TestDns
  const seeded = yield* seedRoles("team")
  const { teamId } = seeded
  const ownerClient = yield* agentOf(seeded.owner, rw)
  const secrets = yield* teamTokens(seeded, rw)
  const base: Cell = { teamId, owner: seeded.owner, secrets, missingTeam: undefined }
  const missingTeam = (yield* callRoute(table[0]!, { ...base, teamId: "team_0000000000000000000000000" }, "owner", secrets.owner)).body
  return () =>
    Effect.gen(function*() {
      yield* ownerClient.teamDomain.clear({ params: { id: teamId } })
      const team = yield* ownerClient.teamDomain.set({
        params: { id: teamId },
        payload: { domain: `access-${randomBytes(5).toString("hex")}.test` }
      })
      dns.setTxt(team.domainVerification!.host, [team.domainVerification!.value])
      return { ...base, missingTeam }
    }).pipe(Effect.orDie)
})

layer(DomainServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("team domain access", (it) => {
  teamAccessTable(it, rw, {
    routes: table,
    seeder,
    check: (answer, cell) => concealed(answer, cell.missingTeam)
  })
})
