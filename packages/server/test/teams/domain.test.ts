/**
 * A team's email domain over HTTP with the typed client, verified against a
 * real DNS server on loopback (test/support/dnsServer.ts) that the server's
 * resolver is pointed at: the pending domain and its challenge, public mailbox
 * domains refused, a match, a mismatch or NXDOMAIN then a match at once (not
 * remembered), resolver failures remembered for one minute (counted at the DNS
 * server, the minute passed on a clock the test moves), one verified domain
 * per team, the per-team rate limit, clearing, and the audit entries.
 */
import { assert, layer } from "@effect/vitest"
import { DOMAIN_VERIFY_PER_MINUTE } from "@herald/api"
import { Clock, Duration, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { randomBytes } from "node:crypto"
import { TestDns } from "../../../../test/support/dnsServer.ts"
import { agentOf, seedTeam } from "../../../../test/support/teams.ts"
import { makePerson, personClient, rawFetch, testServerLayer } from "../../../../test/support/server.ts"

const rw = ["teams:read", "teams:write"] as const

/** How far the server's clock is ahead of the real one (the server reads time only from its Clock). */
const skew = { ms: 0 }
const SkewedClock = Layer.effect(
  Clock.Clock,
  Clock.clockWith((live) =>
    Effect.succeed<Clock.Clock>({
      currentTimeMillisUnsafe: () => live.currentTimeMillisUnsafe() + skew.ms,
      currentTimeMillis: Effect.sync(() => live.currentTimeMillisUnsafe() + skew.ms),
      currentTimeNanosUnsafe: () => live.currentTimeNanosUnsafe() + BigInt(skew.ms) * 1_000_000n,
      currentTimeNanos: Effect.sync(() => live.currentTimeNanosUnsafe() + BigInt(skew.ms) * 1_000_000n),
      monotonicTimeNanosUnsafe: () => live.monotonicTimeNanosUnsafe(),
      monotonicTimeNanos: live.monotonicTimeNanos,
      sleep: (duration) => live.sleep(duration)
    }))
)
const advance = (duration: Duration.Input) => Effect.sync(() => void (skew.ms += Duration.toMillis(Duration.fromInputUnsafe(duration))))

const DomainServerLayer = Layer.unwrap(Effect.gen(function*() {
  const dns = yield* TestDns
  return testServerLayer({ HERALD_DNS_SERVERS: `${dns.host}:${dns.port}`, HERALD_DNS_TIMEOUT_MS: "300" }).pipe(Layer.provide(SkewedClock))
})).pipe(Layer.provideMerge(TestDns.layer))

const freshDomain = (label = "acme") => `${label}-${randomBytes(5).toString("hex")}.test`
const hostOf = (domain: string) => `_herald-verification.${domain}`

/** A team owned by a new person, and that owner's Agent API client. */
const ownedTeam = Effect.gen(function*() {
  const owner = yield* makePerson("domain-owner")
  const { teamId } = yield* seedTeam({ owner, kind: "team" })
  const client = yield* agentOf(owner, rw)
  return { owner, teamId, client }
})
type Owned = Effect.Success<typeof ownedTeam>

/** Sets `domain` as pending and answers its challenge. */
const pending = ({ client, teamId }: Owned, domain: string) =>
  Effect.map(client.teamDomain.set({ params: { id: teamId }, payload: { domain } }), (team) => team.domainVerification!)

const verify = ({ client, teamId }: Owned) => client.teamDomain.verify({ params: { id: teamId } })

/** A raw bearer secret of the owner, for calls that read status and headers. */
const tokenOf = (owned: Owned) =>
  Effect.flatMap(personClient(owned.owner.session), (app) => app.tokens.create({ payload: { name: "domain raw", scopes: [...rw] } })).pipe(
    Effect.map((created) => created.secret),
    Effect.orDie
  )

const auditActions = (teamId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ action: string; targetId: string | null; metadata: Record<string, unknown> | null }>`
      SELECT action, target_id, metadata FROM team_audit WHERE team_id = ${teamId} AND action LIKE 'domain.%'
      ORDER BY created_at, id`).pipe(Effect.orDie)

const codeOf = (error: unknown) => (error as { readonly code?: string }).code

layer(DomainServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("team domain", (it) => {
  it.effect("set: stores the domain lowercased as pending with a fresh challenge shown to the owner only", () =>
    Effect.gen(function*() {
      const owned = yield* ownedTeam
      const admin = yield* makePerson("domain-admin")
      yield* Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql`INSERT INTO team_members (team_id, user_id, role) VALUES (${owned.teamId}, ${admin.person.id}, 'admin')`).pipe(Effect.orDie)
      const domain = freshDomain("Mixed")
      const team = yield* owned.client.teamDomain.set({ params: { id: owned.teamId }, payload: { domain: domain.toUpperCase() } })
      assert.strictEqual(team.pendingDomain, domain.toLowerCase())
      assert.strictEqual(team.verifiedDomain, null)
      assert.strictEqual(team.domainVerification?.host, hostOf(domain.toLowerCase()))
      assert.match(team.domainVerification?.value ?? "", /^herald-verify=[0-9a-f]{32}$/)

      // The challenge is the owner's: an admin reading the team sees the pending domain but not the token.
      const adminClient = yield* agentOf(admin, rw)
      const seenByAdmin = yield* adminClient.teams.get({ params: { id: owned.teamId } })
      assert.strictEqual(seenByAdmin.pendingDomain, domain.toLowerCase())
      assert.strictEqual(seenByAdmin.domainVerification, null)

      // Setting again replaces the pending domain and makes a new token; the old one no longer verifies.
      const other = freshDomain()
      const again = yield* pending(owned, other)
      assert.strictEqual(again.host, hostOf(other))
      assert.notStrictEqual(again.value, team.domainVerification?.value)
      const entries = yield* auditActions(owned.teamId)
      assert.deepStrictEqual(entries.map((e) => [e.action, e.targetId]), [["domain.set", domain.toLowerCase()], ["domain.set", other]])
      assert.strictEqual(entries[1]!.metadata?.replaced, domain.toLowerCase())
    }))

  it.effect("a public mailbox domain (or one under it) is refused with 400 PUBLIC_EMAIL_DOMAIN; a non-domain 400 VALIDATION_FAILED", () =>
    Effect.gen(function*() {
      const owned = yield* ownedTeam
      for (const domain of ["gmail.com", "Outlook.COM", "yahoo.com", "hotmail.com", "icloud.com", "mail.gmail.com"]) {
        const error = yield* Effect.flip(owned.client.teamDomain.set({ params: { id: owned.teamId }, payload: { domain } }))
        assert.strictEqual(codeOf(error), "PUBLIC_EMAIL_DOMAIN", domain)
      }
      for (const domain of ["localhost", "no-dot", "-bad.example.org", "bad-.example.org", "1.2.3.4", "a..b.org", "white space.org", ""]) {
        const answer = yield* rawFetch(`/api/agent/teams/${owned.teamId}/domain`, {
          method: "POST",
          headers: { authorization: `Bearer ${yield* tokenOf(owned)}`, "content-type": "application/json" },
          body: JSON.stringify({ domain })
        })
        assert.strictEqual(answer.status, 400, domain)
        assert.strictEqual((answer.body as { code: string }).code, "VALIDATION_FAILED", domain)
      }
      const team = yield* owned.client.teams.get({ params: { id: owned.teamId } })
      assert.strictEqual(team.pendingDomain, null)
      assert.deepStrictEqual(yield* auditActions(owned.teamId), [])
    }))

  it.effect("match: the TXT value published, verify makes the domain verified and clears the pending one", () =>
    Effect.gen(function*() {
      const dns = yield* TestDns
      const owned = yield* ownedTeam
      const domain = freshDomain()
      const challenge = yield* pending(owned, domain)
      // Other TXT records beside the challenge (SPF and the like) do not get in the way.
      dns.setTxt(challenge.host, ["v=spf1 -all", challenge.value])
      const team = yield* verify(owned)
      assert.strictEqual(team.verifiedDomain, domain)
      assert.strictEqual(team.pendingDomain, null)
      assert.strictEqual(team.domainVerification, null)
      assert.strictEqual(dns.queries(challenge.host), 1)
      const entries = yield* auditActions(owned.teamId)
      assert.deepStrictEqual(entries.map((e) => e.action), ["domain.set", "domain.verified"])
      const row = yield* Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql<{ token: string | null; at: Date | null }>`SELECT domain_token AS token, domain_verified_at AS at FROM teams WHERE id = ${owned.teamId}`).pipe(Effect.orDie)
      assert.strictEqual(row[0]!.token, null)
      assert.isNotNull(row[0]!.at)
      // Nothing is pending any more: verifying again is a 409.
      const error = yield* Effect.flip(verify(owned))
      assert.strictEqual(codeOf(error), "CONFLICT")
    }))

  it.effect("mismatch then match: 422 DOMAIN_NOT_VERIFIED naming the record, not remembered, so the next verify looks again", () =>
    Effect.gen(function*() {
      const dns = yield* TestDns
      const owned = yield* ownedTeam
      const domain = freshDomain()
      const challenge = yield* pending(owned, domain)
      dns.setTxt(challenge.host, ["herald-verify=not-the-token"])
      const error = yield* Effect.flip(verify(owned))
      assert.strictEqual(codeOf(error), "DOMAIN_NOT_VERIFIED")
      const message = (error as { readonly error: string }).error
      assert.include(message, challenge.host)
      assert.include(message, challenge.value)
      assert.include(message, "herald-verify=not-the-token")

      // A name that exists with no TXT record at all is the same answer.
      dns.setTxt(challenge.host, [])
      assert.strictEqual(codeOf(yield* Effect.flip(verify(owned))), "DOMAIN_NOT_VERIFIED")

      dns.setTxt(challenge.host, [challenge.value])
      const team = yield* verify(owned)
      assert.strictEqual(team.verifiedDomain, domain)
      assert.strictEqual(dns.queries(challenge.host), 3)
    }))

  it.effect("NXDOMAIN: 422 DOMAIN_NOT_VERIFIED, not remembered: publishing the record and verifying works at once", () =>
    Effect.gen(function*() {
      const dns = yield* TestDns
      const owned = yield* ownedTeam
      const domain = freshDomain()
      const challenge = yield* pending(owned, domain)
      const error = yield* Effect.flip(verify(owned))
      assert.strictEqual(codeOf(error), "DOMAIN_NOT_VERIFIED")
      assert.include((error as { readonly error: string }).error, "NXDOMAIN")
      dns.setTxt(challenge.host, [challenge.value])
      assert.strictEqual((yield* verify(owned)).verifiedDomain, domain)
      assert.strictEqual(dns.queries(challenge.host), 2)
    }))

  it.effect("resolver timeout: 502 DNS_LOOKUP_FAILED, remembered for the domain for one minute without a new query, then looked up again", () =>
    Effect.gen(function*() {
      const dns = yield* TestDns
      const owned = yield* ownedTeam
      const domain = freshDomain()
      const challenge = yield* pending(owned, domain)
      dns.behave(challenge.host, "silent")
      const token = yield* tokenOf(owned)
      const verifyRaw = rawFetch(`/api/agent/teams/${owned.teamId}/domain/verify`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}` }
      })

      const started = Date.now()
      const first = yield* verifyRaw
      const took = Date.now() - started
      assert.strictEqual(first.status, 502, JSON.stringify(first.body))
      assert.strictEqual((first.body as { code: string }).code, "DNS_LOOKUP_FAILED")
      assert.include((first.body as { error: string }).error, "ETIMEOUT")
      assert.strictEqual(first.headers.get("retry-after"), "60")
      // HERALD_DNS_TIMEOUT_MS=300 bounds the lookup (well under the 5 s default).
      assert.isBelow(took, 3000)
      assert.strictEqual(dns.queries(challenge.host), 1)

      // The record is now there and the server answers, but the failure is remembered: no new query.
      dns.behave(challenge.host, "answer")
      dns.setTxt(challenge.host, [challenge.value])
      const cached = yield* verifyRaw
      assert.strictEqual(cached.status, 502)
      assert.strictEqual(dns.queries(challenge.host), 1)
      yield* advance(Duration.seconds(58))
      const later = yield* verifyRaw
      assert.strictEqual(later.status, 502)
      assert.strictEqual(Number(later.headers.get("retry-after")), 2)
      assert.strictEqual(dns.queries(challenge.host), 1)

      // Past the minute it is forgotten: the next verify queries and succeeds.
      yield* advance(Duration.seconds(2))
      const team = yield* verify(owned)
      assert.strictEqual(team.verifiedDomain, domain)
      assert.strictEqual(dns.queries(challenge.host), 2)
    }))

  it.effect("SERVFAIL: 502 DNS_LOOKUP_FAILED, remembered like a timeout", () =>
    Effect.gen(function*() {
      const dns = yield* TestDns
      const owned = yield* ownedTeam
      const challenge = yield* pending(owned, freshDomain())
      dns.behave(challenge.host, "servfail")
      const error = yield* Effect.flip(verify(owned))
      assert.strictEqual(codeOf(error), "DNS_LOOKUP_FAILED")
      assert.include((error as { readonly error: string }).error, "ESERVFAIL")
      dns.behave(challenge.host, "answer")
      dns.setTxt(challenge.host, [challenge.value])
      assert.strictEqual(codeOf(yield* Effect.flip(verify(owned))), "DNS_LOOKUP_FAILED")
      assert.strictEqual(dns.queries(challenge.host), 1)
      yield* advance(Duration.seconds(61))
      assert.isNotNull((yield* verify(owned)).verifiedDomain)
      assert.strictEqual(dns.queries(challenge.host), 2)
    }))

  it.effect("a domain verified by another team: 409 CONFLICT (pending is not unique; verifying is)", () =>
    Effect.gen(function*() {
      const dns = yield* TestDns
      const first = yield* ownedTeam
      const second = yield* ownedTeam
      const domain = freshDomain()
      const a = yield* pending(first, domain)
      // Both teams may claim the domain while it is pending.
      const b = yield* pending(second, domain.toUpperCase())
      assert.strictEqual(a.host, b.host)
      dns.setTxt(a.host, [a.value, b.value])
      assert.strictEqual((yield* verify(first)).verifiedDomain, domain)
      const error = yield* Effect.flip(verify(second))
      assert.strictEqual(codeOf(error), "CONFLICT")
      assert.include((error as { readonly error: string }).error, domain)
      const secondTeam = yield* second.client.teams.get({ params: { id: second.teamId } })
      assert.strictEqual(secondTeam.verifiedDomain, null)
      assert.strictEqual(secondTeam.pendingDomain, domain)
    }))

  it.effect("two teams verifying one domain at once: exactly one gets it, the other 409 (the unique index decides)", () =>
    Effect.gen(function*() {
      const dns = yield* TestDns
      for (let round = 0; round < 5; round++) {
        const teams = [yield* ownedTeam, yield* ownedTeam]
        const domain = freshDomain("race")
        const challenges = yield* Effect.forEach(teams, (t) => pending(t, domain))
        dns.setTxt(hostOf(domain), challenges.map((c) => c.value))
        const outcomes = yield* Effect.forEach(teams, (t) => Effect.result(verify(t)), { concurrency: "unbounded" })
        const won = outcomes.filter((o) => o._tag === "Success")
        const lost = outcomes.filter((o) => o._tag === "Failure")
        assert.strictEqual(won.length, 1, `round ${round}`)
        assert.strictEqual(lost.length, 1, `round ${round}`)
        assert.strictEqual(codeOf(lost[0]!.failure), "CONFLICT")
        const holders = yield* Effect.flatMap(SqlClient.SqlClient, (sql) =>
          sql<{ n: number }>`SELECT count(*)::int AS n FROM teams WHERE verified_domain = ${domain}`).pipe(Effect.orDie)
        assert.strictEqual(holders[0]!.n, 1)
      }
    }))

  it.effect(`rate limit: ${DOMAIN_VERIFY_PER_MINUTE} verify calls a minute per team, then 429 RATE_LIMITED with Retry-After`, () =>
    Effect.gen(function*() {
      const owned = yield* ownedTeam
      const other = yield* ownedTeam
      const challenge = yield* pending(owned, freshDomain())
      yield* pending(other, freshDomain())
      const token = yield* tokenOf(owned)
      const verifyRaw = rawFetch(`/api/agent/teams/${owned.teamId}/domain/verify`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}` }
      })
      for (let i = 0; i < DOMAIN_VERIFY_PER_MINUTE; i++) {
        const answer = yield* verifyRaw
        assert.strictEqual(answer.status, 422, `call ${i + 1}`)
      }
      const refused = yield* verifyRaw
      assert.strictEqual(refused.status, 429)
      assert.strictEqual((refused.body as { code: string }).code, "RATE_LIMITED")
      const retryAfter = Number(refused.headers.get("retry-after"))
      assert.isAtLeast(retryAfter, 1)
      assert.isAtMost(retryAfter, 6)
      // Refused before any lookup.
      const dns = yield* TestDns
      assert.strictEqual(dns.queries(challenge.host), DOMAIN_VERIFY_PER_MINUTE)
      // Another team's budget is its own.
      assert.strictEqual(codeOf(yield* Effect.flip(verify(other))), "DOMAIN_NOT_VERIFIED")
      // The budget refills with time.
      yield* advance(Duration.seconds(retryAfter))
      assert.strictEqual((yield* verifyRaw).status, 422)
    }))

  it.effect("clear: removes the pending domain and its challenge, or the verified domain; audit domain.cleared", () =>
    Effect.gen(function*() {
      const dns = yield* TestDns
      const owned = yield* ownedTeam
      const first = freshDomain()
      const challenge = yield* pending(owned, first)
      const cleared = yield* owned.client.teamDomain.clear({ params: { id: owned.teamId } })
      assert.strictEqual(cleared.pendingDomain, null)
      assert.strictEqual(cleared.domainVerification, null)
      // The old challenge no longer verifies anything.
      dns.setTxt(challenge.host, [challenge.value])
      assert.strictEqual(codeOf(yield* Effect.flip(verify(owned))), "CONFLICT")

      const domain = freshDomain()
      const next = yield* pending(owned, domain)
      dns.setTxt(next.host, [next.value])
      assert.strictEqual((yield* verify(owned)).verifiedDomain, domain)
      const gone = yield* owned.client.teamDomain.clear({ params: { id: owned.teamId } })
      assert.strictEqual(gone.verifiedDomain, null)
      // Clearing nothing is a no-op (and writes no entry).
      yield* owned.client.teamDomain.clear({ params: { id: owned.teamId } })
      const entries = yield* auditActions(owned.teamId)
      assert.deepStrictEqual(entries.map((e) => [e.action, e.targetId]), [
        ["domain.set", first],
        ["domain.cleared", first],
        ["domain.set", domain],
        ["domain.verified", domain],
        ["domain.cleared", domain]
      ])
      // Once released, another team can verify it.
      const another = yield* ownedTeam
      const theirs = yield* pending(another, domain)
      dns.setTxt(theirs.host, [theirs.value])
      assert.strictEqual((yield* verify(another)).verifiedDomain, domain)
    }))
})

