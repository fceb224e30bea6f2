/**
 * Team invites over HTTP with the typed clients: creating (the code shown
 * once, hashed at rest, 7 days), family capacity with pending invites holding
 * seats, accepting by code (e-mail and domain invites, the one 404 for every
 * unusable code), auto-join through a verified domain, revoking, and the audit
 * entries each change commits with it.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { hashSecret } from "../../src/auth/Secrets.ts"
import { makePerson, personClient, rawFetch, testServerLayer } from "../../../../test/support/server.ts"
import { agentOf, seedRoles, seedTeam } from "../../../../test/support/teams.ts"
import {
  acceptRaw,
  auditOf,
  expireInvite,
  personAt,
  personWithEmail,
  rolesOf,
  rw,
  uniqueDomain,
  verifyDomain
} from "./invitesSupport.ts"

const PUBLIC_URL = "https://herald.example.test"
const DAY = 24 * 60 * 60 * 1000

layer(testServerLayer({ HERALD_PUBLIC_URL: PUBLIC_URL }), { excludeTestServices: true, timeout: "60 seconds" })("team invites", (it) => {
  it.effect("create: 201 with the code once, its join link, 7 days; only the hash is stored and the list never shows it", () =>
    Effect.gen(function*() {
      const { owner, teamId } = yield* seedRoles("team")
      const client = yield* agentOf(owner, rw)
      const before = Date.now()
      const created = yield* client.teamInvites.create({ params: { id: teamId }, payload: { email: "Kid@Example.test" } })
      assert.match(created.code, /^[A-Za-z0-9_-]{22,}$/)
      assert.strictEqual(created.url, `${PUBLIC_URL}/join/${created.code}`)
      assert.match(created.invite.id, /^inv_/)
      assert.strictEqual(created.invite.teamId, teamId)
      assert.strictEqual(created.invite.email, "kid@example.test")
      assert.isNull(created.invite.domain)
      assert.strictEqual(created.invite.role, "member")
      assert.strictEqual(created.invite.invitedBy, owner.person.id)
      assert.isNull(created.invite.acceptedAt)
      assert.isNull(created.invite.revokedAt)
      const expires = Date.parse(created.invite.expiresAt!)
      assert.isAtLeast(expires, before + 7 * DAY - 60_000)
      assert.isAtMost(expires, Date.now() + 7 * DAY + 60_000)

      const sql = yield* SqlClient.SqlClient
      const [row] = yield* sql<{ codeHash: string }>`SELECT code_hash FROM team_invites WHERE id = ${created.invite.id}`
      assert.notStrictEqual(row!.codeHash, created.code)
      assert.notInclude(row!.codeHash, created.code)
      assert.strictEqual(row!.codeHash, hashSecret(created.code))

      const listed = yield* client.teamInvites.list({ params: { id: teamId } })
      assert.deepStrictEqual(listed.items.map((i) => i.id), [created.invite.id])
      const raw = yield* rawFetch(`/api/agent/teams/${teamId}/invites`, {
        headers: { authorization: `Bearer ${(yield* personClient(owner.session).pipe(
          Effect.flatMap((app) => app.tokens.create({ payload: { name: "raw", scopes: ["teams:read"] } }))
        )).secret}` }
      })
      assert.strictEqual(raw.status, 200)
      assert.notInclude(JSON.stringify(raw.body), created.code)
      assert.notInclude(JSON.stringify(raw.body), row!.codeHash)

      // The status itself, over raw HTTP.
      const secret = (yield* personClient(owner.session).pipe(
        Effect.flatMap((app) => app.tokens.create({ payload: { name: "raw", scopes: ["teams:write"] } }))
      )).secret
      const posted = yield* rawFetch(`/api/agent/teams/${teamId}/invites`, {
        method: "POST",
        headers: { authorization: `Bearer ${secret}`, "content-type": "application/json" },
        body: JSON.stringify({ domain: "example.test" })
      })
      assert.strictEqual(posted.status, 201)
      assert.strictEqual((posted.body as { invite: { domain: string } }).invite.domain, "example.test")
    }))

  it.effect("create: exactly one of email or domain, else 400 BAD_REQUEST", () =>
    Effect.gen(function*() {
      const { owner, teamId } = yield* seedRoles("team")
      const client = yield* agentOf(owner, rw)
      const neither = yield* Effect.flip(client.teamInvites.create({ params: { id: teamId }, payload: {} }))
      assert.strictEqual(neither._tag, "BadRequest")
      const both = yield* Effect.flip(client.teamInvites.create({
        params: { id: teamId },
        payload: { email: "a@example.test", domain: "example.test" }
      }))
      assert.strictEqual(both._tag, "BadRequest")
      assert.strictEqual((both as { code?: string }).code, "BAD_REQUEST")
      assert.deepStrictEqual((yield* client.teamInvites.list({ params: { id: teamId } })).items, [])
    }))

  it.effect("create: only the owner invites admins; admins invite members; a member 403, an outsider 404", () =>
    Effect.gen(function*() {
      const { admin, member, outsider, owner, teamId } = yield* seedRoles("team")
      const invite = (who: typeof owner, role: "admin" | "member") =>
        Effect.flatMap(agentOf(who, rw), (client) =>
          Effect.result(client.teamInvites.create({ params: { id: teamId }, payload: { domain: "example.test", role } })))
      const tag = (r: Effect.Success<ReturnType<typeof invite>>) => r._tag === "Success" ? r.success.invite.role : r.failure._tag
      assert.strictEqual(tag(yield* invite(owner, "admin")), "admin")
      assert.strictEqual(tag(yield* invite(owner, "member")), "member")
      assert.strictEqual(tag(yield* invite(admin, "admin")), "Forbidden")
      assert.strictEqual(tag(yield* invite(admin, "member")), "member")
      assert.strictEqual(tag(yield* invite(member, "member")), "Forbidden")
      assert.strictEqual(tag(yield* invite(outsider, "member")), "NotFound")
    }))

  it.effect("family capacity: members plus pending invites never pass 4; expired and revoked invites free their seat", () =>
    Effect.gen(function*() {
      const owner = yield* makePerson("owner")
      const client = yield* agentOf(owner, rw)
      const three = [yield* makePerson("a"), yield* makePerson("b"), yield* makePerson("c")]
      const full = yield* seedTeam({ owner, members: three.map((person) => ({ person, role: "member" as const })) })
      const refused = yield* Effect.flip(client.teamInvites.create({ params: { id: full.teamId }, payload: { email: "x@example.test" } }))
      assert.strictEqual(refused._tag, "LimitReached")
      assert.strictEqual((refused as { limit?: number }).limit, 4)
      assert.deepStrictEqual({ ...(yield* client.teams.get({ params: { id: full.teamId } })).seats }, { used: 4, available: 0, billable: 0 })

      const { teamId } = yield* seedTeam({ owner, members: three.slice(0, 2).map((person) => ({ person, role: "member" as const })) })
      const seats = () => Effect.map(client.teams.get({ params: { id: teamId } }), (team) => ({ ...team.seats }))
      assert.deepStrictEqual(yield* seats(), { used: 3, available: 1, billable: 0 })
      const pending = yield* client.teamInvites.create({ params: { id: teamId }, payload: { email: "first@example.test" } })
      assert.deepStrictEqual(yield* seats(), { used: 4, available: 0, billable: 0 })
      const next = yield* Effect.flip(client.teamInvites.create({ params: { id: teamId }, payload: { email: "second@example.test" } }))
      assert.strictEqual(next._tag, "LimitReached")

      yield* expireInvite(pending.invite.id)
      assert.deepStrictEqual(yield* seats(), { used: 3, available: 1, billable: 0 })
      const afterExpiry = yield* client.teamInvites.create({ params: { id: teamId }, payload: { email: "second@example.test" } })
      assert.strictEqual((yield* Effect.flip(client.teamInvites.create({ params: { id: teamId }, payload: { domain: "example.test" } })))._tag, "LimitReached")

      yield* client.teamInvites.revoke({ params: { id: teamId, inviteId: afterExpiry.invite.id } })
      assert.deepStrictEqual(yield* seats(), { used: 3, available: 1, billable: 0 })
      yield* client.teamInvites.create({ params: { id: teamId }, payload: { email: "third@example.test" } })
      assert.deepStrictEqual(yield* seats(), { used: 4, available: 0, billable: 0 })
    }))

  it.effect("a workplace team keeps at most 500 pending invites (422 LIMIT_REACHED, limit 500); expired ones do not count", () =>
    Effect.gen(function*() {
      const { owner, teamId } = yield* seedRoles("team")
      const client = yield* agentOf(owner, rw)
      const sql = yield* SqlClient.SqlClient
      yield* sql`INSERT INTO team_invites (id, team_id, code_hash, email, role, invited_by, expires_at)
                 SELECT ${teamId} || '-inv-' || n, ${teamId}, ${teamId} || '-hash-' || n, 'p' || n || '@example.test',
                        'member', ${owner.person.id}, now() + interval '7 days'
                 FROM generate_series(1, 500) AS n`
      const refused = yield* Effect.flip(client.teamInvites.create({ params: { id: teamId }, payload: { domain: "example.test" } }))
      assert.strictEqual(refused._tag, "LimitReached")
      assert.strictEqual((refused as { limit?: number }).limit, 500)
      yield* sql`UPDATE team_invites SET expires_at = now() - interval '1 minute' WHERE id = ${`${teamId}-inv-1`}`
      assert.strictEqual((yield* client.teamInvites.create({ params: { id: teamId }, payload: { domain: "example.test" } })).invite.role, "member")
    }))

  it.effect("accept by code: joins in the invite's role and answers the team as the new member sees it", () =>
    Effect.gen(function*() {
      const { owner, teamId } = yield* seedRoles("team")
      const client = yield* agentOf(owner, rw)
      const joiner = yield* makePerson("joiner")
      const asAdmin = yield* client.teamInvites.create({ params: { id: teamId }, payload: { email: joiner.person.email, role: "admin" } })
      const team = yield* (yield* personClient(joiner.session)).invites.accept({ payload: { code: asAdmin.code } })
      assert.strictEqual(team.id, teamId)
      assert.strictEqual(team.role, "admin")
      assert.strictEqual(team.memberCount, 4)
      const detail = yield* client.teams.get({ params: { id: teamId } })
      assert.strictEqual(detail.members.find((m) => m.userId === joiner.person.id)?.role, "admin")
      const [listed] = (yield* client.teamInvites.list({ params: { id: teamId } })).items
      assert.isNotNull(listed!.acceptedAt)

      const domain = uniqueDomain()
      const byDomain = yield* client.teamInvites.create({ params: { id: teamId }, payload: { domain } })
      const colleague = yield* personAt(domain)
      const joined = yield* (yield* personClient(colleague.session)).invites.accept({ payload: { code: byDomain.code } })
      assert.strictEqual(joined.role, "member")
      assert.strictEqual((yield* rolesOf(teamId)).get(colleague.person.id), "member")
    }))

  it.effect("an unknown, accepted, revoked or expired code answers 404 with one body for all four", () =>
    Effect.gen(function*() {
      const { owner, teamId } = yield* seedRoles("team")
      const client = yield* agentOf(owner, rw)
      const domain = uniqueDomain()
      const invite = () => client.teamInvites.create({ params: { id: teamId }, payload: { domain } })
      const accepted = yield* invite()
      const first = yield* personAt(domain)
      yield* (yield* personClient(first.session)).invites.accept({ payload: { code: accepted.code } })
      const revoked = yield* invite()
      yield* client.teamInvites.revoke({ params: { id: teamId, inviteId: revoked.invite.id } })
      const expired = yield* invite()
      yield* expireInvite(expired.invite.id)

      const someone = yield* personAt(domain)
      const answers = []
      for (const code of ["no-such-code-at-all-0000", accepted.code, revoked.code, expired.code]) {
        answers.push(yield* acceptRaw(someone.session, { code }))
      }
      for (const answer of answers) {
        assert.strictEqual(answer.status, 404)
        assert.deepStrictEqual(answer.body, answers[0]!.body)
      }
      assert.strictEqual((answers[0]!.body as { code: string }).code, "NOT_FOUND")
      assert.isFalse((yield* rolesOf(teamId)).has(someone.person.id))

      // The list keeps all three, newest first, each in its state.
      const listed = (yield* client.teamInvites.list({ params: { id: teamId } })).items
      const ids = listed.map((i) => i.id)
      assert.sameMembers(ids, [accepted.invite.id, revoked.invite.id, expired.invite.id])
      assert.deepStrictEqual(ids, [...ids].sort().reverse())
      const byId = new Map(listed.map((i) => [i.id, i]))
      assert.isNotNull(byId.get(accepted.invite.id)!.acceptedAt)
      assert.isNotNull(byId.get(revoked.invite.id)!.revokedAt)
      assert.isBelow(Date.parse(byId.get(expired.invite.id)!.expiresAt!), Date.now())
    }))

  it.effect("e-mail and domain invites are for their address or domain only (403 otherwise); already a member 409", () =>
    Effect.gen(function*() {
      const { member, owner, teamId } = yield* seedRoles("team")
      const client = yield* agentOf(owner, rw)
      const domain = uniqueDomain()
      const named = yield* personWithEmail(`named@${domain}`, "named")
      const other = yield* personAt(domain, "other")
      const elsewhere = yield* personAt(uniqueDomain("elsewhere"))
      const accept = (who: typeof named, code: string) => Effect.flatMap(personClient(who.session), (app) => app.invites.accept({ payload: { code } }))

      const forNamed = yield* client.teamInvites.create({ params: { id: teamId }, payload: { email: `NAMED@${domain.toUpperCase()}` } })
      assert.strictEqual((yield* Effect.flip(accept(other, forNamed.code)))._tag, "Forbidden")
      assert.strictEqual((yield* accept(named, forNamed.code)).role, "member")

      const forDomain = yield* client.teamInvites.create({ params: { id: teamId }, payload: { domain } })
      assert.strictEqual((yield* Effect.flip(accept(elsewhere, forDomain.code)))._tag, "Forbidden")
      assert.strictEqual((yield* Effect.flip(accept(named, forDomain.code)))._tag, "Conflict")
      // The refusals left the code usable.
      assert.strictEqual((yield* accept(other, forDomain.code)).role, "member")

      const forMember = yield* client.teamInvites.create({ params: { id: teamId }, payload: { email: member.person.email } })
      assert.strictEqual((yield* Effect.flip(accept(member, forMember.code)))._tag, "Conflict")
      assert.strictEqual((yield* rolesOf(teamId)).get(member.person.id), "member")
    }))

  it.effect("accept needs exactly one of code or teamId: neither or both is 400 BAD_REQUEST", () =>
    Effect.gen(function*() {
      const { owner, teamId } = yield* seedRoles("team")
      const client = yield* agentOf(owner, rw)
      const joiner = yield* makePerson("joiner")
      const created = yield* client.teamInvites.create({ params: { id: teamId }, payload: { email: joiner.person.email } })
      const app = yield* personClient(joiner.session)
      assert.strictEqual((yield* Effect.flip(app.invites.accept({ payload: {} })))._tag, "BadRequest")
      const both = yield* acceptRaw(joiner.session, { code: created.code, teamId })
      assert.strictEqual(both.status, 400)
      assert.strictEqual((both.body as { code: string }).code, "BAD_REQUEST")
      assert.isFalse((yield* rolesOf(teamId)).has(joiner.person.id))
    }))

  it.effect("auto-join by teamId: only a verified domain matching the person's, with autoJoinVerifiedDomain on; else 404", () =>
    Effect.gen(function*() {
      const { owner, teamId } = yield* seedRoles("team")
      const client = yield* agentOf(owner, rw)
      const domain = uniqueDomain("corp")
      const colleague = yield* personAt(domain.toUpperCase(), "colleague")
      const stranger = yield* personAt(uniqueDomain("other"), "stranger")
      const join = (who: typeof colleague, id: string) => acceptRaw(who.session, { teamId: id })
      const missing = yield* join(colleague, "team_00000000000000000000000000")
      assert.strictEqual(missing.status, 404)

      // Auto-join on, no verified domain yet.
      yield* client.teams.update({ params: { id: teamId }, payload: { autoJoinVerifiedDomain: true } })
      assert.deepStrictEqual(yield* join(colleague, teamId), missing)
      // Verified, auto-join off.
      yield* verifyDomain(teamId, domain)
      yield* client.teams.update({ params: { id: teamId }, payload: { autoJoinVerifiedDomain: false } })
      assert.deepStrictEqual(yield* join(colleague, teamId), missing)
      // Both: the domain's people join as members; others still 404.
      yield* client.teams.update({ params: { id: teamId }, payload: { autoJoinVerifiedDomain: true } })
      assert.deepStrictEqual(yield* join(stranger, teamId), missing)
      const team = yield* (yield* personClient(colleague.session)).invites.accept({ payload: { teamId } })
      assert.strictEqual(team.id, teamId)
      assert.strictEqual(team.role, "member")
      assert.strictEqual((yield* rolesOf(teamId)).get(colleague.person.id), "member")
      assert.strictEqual((yield* join(colleague, teamId)).status, 409)
      assert.isFalse((yield* rolesOf(teamId)).has(stranger.person.id))
    }))

  it.effect("revoke: the code stops working, twice answers the same invite, accepted 409, admin invite owner-only, foreign 404", () =>
    Effect.gen(function*() {
      const { admin, owner, teamId } = yield* seedRoles("team")
      const ownerClient = yield* agentOf(owner, rw)
      const adminClient = yield* agentOf(admin, rw)
      const domain = uniqueDomain()
      const joiner = yield* personAt(domain)
      const app = yield* personClient(joiner.session)

      const pending = yield* adminClient.teamInvites.create({ params: { id: teamId }, payload: { domain } })
      const revoked = yield* adminClient.teamInvites.revoke({ params: { id: teamId, inviteId: pending.invite.id } })
      assert.strictEqual(revoked.id, pending.invite.id)
      assert.isNotNull(revoked.revokedAt)
      assert.strictEqual((yield* Effect.flip(app.invites.accept({ payload: { code: pending.code } })))._tag, "NotFound")
      const again = yield* ownerClient.teamInvites.revoke({ params: { id: teamId, inviteId: pending.invite.id } })
      assert.deepStrictEqual({ ...again }, { ...revoked })

      const accepted = yield* adminClient.teamInvites.create({ params: { id: teamId }, payload: { domain } })
      yield* app.invites.accept({ payload: { code: accepted.code } })
      const conflict = yield* Effect.flip(ownerClient.teamInvites.revoke({ params: { id: teamId, inviteId: accepted.invite.id } }))
      assert.strictEqual(conflict._tag, "Conflict")

      const adminInvite = yield* ownerClient.teamInvites.create({ params: { id: teamId }, payload: { domain, role: "admin" } })
      const refused = yield* Effect.flip(adminClient.teamInvites.revoke({ params: { id: teamId, inviteId: adminInvite.invite.id } }))
      assert.strictEqual(refused._tag, "Forbidden")
      assert.isNotNull((yield* ownerClient.teamInvites.revoke({ params: { id: teamId, inviteId: adminInvite.invite.id } })).revokedAt)

      const other = yield* seedTeam({ owner, kind: "team" })
      const foreign = yield* ownerClient.teamInvites.create({ params: { id: other.teamId }, payload: { domain } })
      const wrongTeam = yield* Effect.flip(ownerClient.teamInvites.revoke({ params: { id: teamId, inviteId: foreign.invite.id } }))
      assert.strictEqual(wrongTeam._tag, "NotFound")
      const unknown = yield* Effect.flip(ownerClient.teamInvites.revoke({ params: { id: teamId, inviteId: "inv_00000000000000000000000000" } }))
      assert.strictEqual(unknown._tag, "NotFound")
      // The foreign invite is untouched.
      const [stillPending] = (yield* ownerClient.teamInvites.list({ params: { id: other.teamId } })).items
      assert.isNull(stillPending!.revokedAt)
    }))

  it.effect("audit: invite.created, invite.revoked, invite.accepted + member.joined, each in its change's transaction; refusals write none", () =>
    Effect.gen(function*() {
      const { owner, teamId } = yield* seedRoles("team")
      const client = yield* agentOf(owner, rw)
      const sql = yield* SqlClient.SqlClient
      const domain = uniqueDomain()
      const joiner = yield* personAt(domain)
      const app = yield* personClient(joiner.session)
      const xminOf = (inviteId: string) =>
        Effect.map(sql<{ xmin: string }>`SELECT xmin::text AS xmin FROM team_invites WHERE id = ${inviteId}`, ([row]) => row!.xmin)

      const revokedInvite = yield* client.teamInvites.create({ params: { id: teamId }, payload: { email: "gone@example.test" } })
      const [created] = yield* auditOf(teamId)
      assert.strictEqual(created!.action, "invite.created")
      assert.strictEqual(created!.targetId, revokedInvite.invite.id)
      assert.strictEqual(created!.actorUserId, owner.person.id)
      assert.isNotNull(created!.actorTokenId)
      assert.deepStrictEqual(created!.metadata, { email: "gone@example.test", domain: null, role: "member" })
      assert.strictEqual(created!.xmin, yield* xminOf(revokedInvite.invite.id))

      yield* client.teamInvites.revoke({ params: { id: teamId, inviteId: revokedInvite.invite.id } })
      yield* client.teamInvites.revoke({ params: { id: teamId, inviteId: revokedInvite.invite.id } })
      const revokes = (yield* auditOf(teamId)).filter((row) => row.action === "invite.revoked")
      assert.strictEqual(revokes.length, 1, "revoking twice records once")
      assert.strictEqual(revokes[0]!.xmin, yield* xminOf(revokedInvite.invite.id))

      const invite = yield* client.teamInvites.create({ params: { id: teamId }, payload: { domain } })
      const beforeRefusals = (yield* auditOf(teamId)).length
      const outsider = yield* personAt(uniqueDomain("elsewhere"))
      yield* Effect.flip((yield* personClient(outsider.session)).invites.accept({ payload: { code: invite.code } }))
      yield* Effect.flip((yield* personClient(owner.session)).invites.accept({ payload: { code: invite.code } }))
      yield* Effect.flip(app.invites.accept({ payload: { code: revokedInvite.code } }))
      assert.strictEqual((yield* auditOf(teamId)).length, beforeRefusals)

      yield* app.invites.accept({ payload: { code: invite.code } })
      // Both written in one millisecond, in no set order.
      const rows = (yield* auditOf(teamId)).slice(beforeRefusals)
      assert.sameMembers(rows.map((row) => row.action), ["invite.accepted", "member.joined"])
      for (const row of rows) {
        assert.strictEqual(row.actorUserId, joiner.person.id)
        assert.isNull(row.actorTokenId)
      }
      const accepted = rows.find((row) => row.action === "invite.accepted")!
      const joined = rows.find((row) => row.action === "member.joined")!
      assert.strictEqual(accepted.targetId, invite.invite.id)
      assert.strictEqual(joined.targetId, joiner.person.id)
      assert.strictEqual(joined.metadata?.role, "member")
      const [memberRow] = yield* sql<{ xmin: string }>`SELECT xmin::text AS xmin FROM team_members
                                                      WHERE team_id = ${teamId} AND user_id = ${joiner.person.id}`
      assert.strictEqual(accepted.xmin, yield* xminOf(invite.invite.id))
      assert.strictEqual(joined.xmin, memberRow!.xmin)
      assert.strictEqual(accepted.xmin, joined.xmin)
    }))

  it.effect("auto-join writes member.joined (no invite entry); a refused auto-join writes none", () =>
    Effect.gen(function*() {
      const owner = yield* makePerson("owner")
      const client = yield* agentOf(owner, rw)
      const domain = uniqueDomain("fam")
      const three = [yield* makePerson("a"), yield* makePerson("b")]
      const { teamId } = yield* seedTeam({ owner, members: three.map((person) => ({ person, role: "member" as const })) })
      yield* verifyDomain(teamId, domain)
      yield* client.teams.update({ params: { id: teamId }, payload: { autoJoinVerifiedDomain: true } })
      const before = (yield* auditOf(teamId)).length
      const first = yield* personAt(domain)
      const second = yield* personAt(domain)
      yield* (yield* personClient(first.session)).invites.accept({ payload: { teamId } })
      const full = yield* Effect.flip((yield* personClient(second.session)).invites.accept({ payload: { teamId } }))
      assert.strictEqual(full._tag, "LimitReached")
      assert.strictEqual((full as { limit?: number }).limit, 4)
      const rows = (yield* auditOf(teamId)).slice(before)
      assert.deepStrictEqual(rows.map((row) => [row.action, row.targetId]), [["member.joined", first.person.id]])
    }))
})
