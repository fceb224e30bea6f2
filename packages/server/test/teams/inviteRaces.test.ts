/**
 * Invites racing each other over HTTP: two people for a family's last seat,
 * two people with one code, two invites for the last seat, a revoke against
 * an accept. Each race runs several rounds on fresh families, both requests
 * sent at once; exactly one outcome holds and the seat count never passes 4.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { makePerson, personClient, TestServerLayer } from "../../../../test/support/server.ts"
import { agentOf, seedTeam } from "../../../../test/support/teams.ts"
import type { Someone } from "../../../../test/support/teams.ts"
import { outcome, personAt, rolesOf, rw, uniqueDomain, verifyDomain } from "./invitesSupport.ts"

const ROUNDS = 6

/** Both at once. */
const race = <A, B, R1, R2>(a: Effect.Effect<A, never, R1>, b: Effect.Effect<B, never, R2>) =>
  Effect.all([a, b], { concurrency: "unbounded" })

/** A family of its owner and `members` more, with its agent client. */
const family = (members: number) =>
  Effect.gen(function*() {
    const owner = yield* makePerson("owner")
    const others: Array<Someone> = []
    for (let i = 0; i < members; i++) others.push(yield* makePerson(`m${i}`))
    const { teamId } = yield* seedTeam({ owner, members: others.map((person) => ({ person, role: "member" as const })) })
    return { owner, teamId, client: yield* agentOf(owner, rw) }
  })

const accept = (who: Someone, payload: { readonly code: string } | { readonly teamId: string }) =>
  Effect.flatMap(personClient(who.session), (app) => outcome(app.invites.accept({ payload })))

layer(TestServerLayer, { excludeTestServices: true, timeout: "120 seconds" })("invite races", (it) => {
  it.effect("two auto-joins for a family's last seat: exactly one gets in (200), the other 422; 4 members", () =>
    Effect.gen(function*() {
      for (let round = 0; round < ROUNDS; round++) {
        const { client, teamId } = yield* family(2)
        const domain = uniqueDomain("race")
        yield* verifyDomain(teamId, domain)
        yield* client.teams.update({ params: { id: teamId }, payload: { autoJoinVerifiedDomain: true } })
        const a = yield* personAt(domain, "a")
        const b = yield* personAt(domain, "b")
        const results = yield* race(accept(a, { teamId }), accept(b, { teamId }))
        assert.sameMembers(results, ["ok", "LimitReached"], `round ${round}`)
        const team = yield* client.teams.get({ params: { id: teamId } })
        assert.strictEqual(team.memberCount, 4)
        assert.deepStrictEqual({ ...team.seats }, { used: 4, available: 0, billable: 0 })
        const winner = results[0] === "ok" ? a : b
        assert.isTrue((yield* rolesOf(teamId)).has(winner.person.id))
      }
    }))

  it.effect("one code accepted by two people at once: exactly one joins, the other 404", () =>
    Effect.gen(function*() {
      for (let round = 0; round < ROUNDS; round++) {
        const { client, teamId } = yield* family(1)
        const domain = uniqueDomain("code")
        const invite = yield* client.teamInvites.create({ params: { id: teamId }, payload: { domain } })
        const a = yield* personAt(domain, "a")
        const b = yield* personAt(domain, "b")
        const results = yield* race(accept(a, { code: invite.code }), accept(b, { code: invite.code }))
        assert.sameMembers(results, ["ok", "NotFound"], `round ${round}`)
        const winner = results[0] === "ok" ? a : b
        const roles = yield* rolesOf(teamId)
        assert.strictEqual(roles.size, 3)
        assert.strictEqual(roles.get(winner.person.id), "member")
        const sql = yield* SqlClient.SqlClient
        const [row] = yield* sql<{ acceptedBy: string }>`SELECT accepted_by FROM team_invites WHERE id = ${invite.invite.id}`
        assert.strictEqual(row!.acceptedBy, winner.person.id)
      }
    }))

  it.effect("two invites for a family's last seat: exactly one is created, the other 422", () =>
    Effect.gen(function*() {
      for (let round = 0; round < ROUNDS; round++) {
        const { client, teamId } = yield* family(2)
        const invite = (email: string) => outcome(client.teamInvites.create({ params: { id: teamId }, payload: { email } }))
        const results = yield* race(invite("a@example.test"), invite("b@example.test"))
        assert.sameMembers(results, ["ok", "LimitReached"], `round ${round}`)
        assert.strictEqual((yield* client.teamInvites.list({ params: { id: teamId } })).items.length, 1)
        assert.deepStrictEqual({ ...(yield* client.teams.get({ params: { id: teamId } })).seats }, { used: 4, available: 0, billable: 0 })
      }
    }))

  it.effect("an invite's holder and an auto-join for the last free seat: the invite keeps its seat", () =>
    Effect.gen(function*() {
      for (let round = 0; round < ROUNDS; round++) {
        // Owner + 1 member + 1 pending invite: one seat free.
        const { client, teamId } = yield* family(1)
        const domain = uniqueDomain("mix")
        const invite = yield* client.teamInvites.create({ params: { id: teamId }, payload: { domain } })
        yield* verifyDomain(teamId, domain)
        yield* client.teams.update({ params: { id: teamId }, payload: { autoJoinVerifiedDomain: true } })
        const holder = yield* personAt(domain, "holder")
        const a = yield* personAt(domain, "a")
        const b = yield* personAt(domain, "b")
        const [held, ...joins] = yield* Effect.all([
          accept(holder, { code: invite.code }),
          accept(a, { teamId }),
          accept(b, { teamId })
        ], { concurrency: "unbounded" })
        assert.strictEqual(held, "ok", `round ${round}`)
        assert.sameMembers(joins, ["ok", "LimitReached"], `round ${round}`)
        assert.strictEqual((yield* rolesOf(teamId)).size, 4)
      }
    }))

  it.effect("a revoke racing an accept of the same code: accepted (revoke 409) or revoked (accept 404)", () =>
    Effect.gen(function*() {
      for (let round = 0; round < ROUNDS; round++) {
        const { client, teamId } = yield* family(1)
        const domain = uniqueDomain("rev")
        const invite = yield* client.teamInvites.create({ params: { id: teamId }, payload: { domain } })
        const joiner = yield* personAt(domain)
        const [revoked, accepted] = yield* race(
          outcome(client.teamInvites.revoke({ params: { id: teamId, inviteId: invite.invite.id } })),
          accept(joiner, { code: invite.code })
        )
        const roles = yield* rolesOf(teamId)
        if (accepted === "ok") {
          assert.strictEqual(revoked, "Conflict", `round ${round}`)
          assert.isTrue(roles.has(joiner.person.id))
        } else {
          assert.deepStrictEqual([revoked, accepted], ["ok", "NotFound"], `round ${round}`)
          assert.isFalse(roles.has(joiner.person.id))
        }
      }
    }))
})
