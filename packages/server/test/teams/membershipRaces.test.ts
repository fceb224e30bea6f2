/**
 * Membership changes racing each other over HTTP: exactly one outcome holds,
 * no team ends with zero or two owners, and no race ends in a deadlock or a
 * 500. Each race runs several rounds on fresh teams, both requests sent at
 * once.
 */
import { assert, layer } from "@effect/vitest"
import type { Scope } from "@herald/api"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { MAX_FAMILIES_PER_PERSON } from "../../src/config/Limits.ts"
import { makePerson, TestServerLayer } from "../../../../test/support/server.ts"
import { agentOf, seedRoles, seedTeam } from "../../../../test/support/teams.ts"

const rw: ReadonlyArray<Scope> = ["teams:read", "teams:write"]
const ROUNDS = 6

/** "ok", or the error's tag. */
const outcome = <A, E extends { readonly _tag: string }, R>(call: Effect.Effect<A, E, R>) =>
  Effect.map(Effect.result(call), (result) => result._tag === "Success" ? "ok" : result.failure._tag)

/** Both at once. */
const race = <A, B, R1, R2>(a: Effect.Effect<A, never, R1>, b: Effect.Effect<B, never, R2>) =>
  Effect.all([a, b], { concurrency: "unbounded" })

const rolesOf = (teamId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ userId: string; role: string }>`SELECT user_id, role FROM team_members WHERE team_id = ${teamId}`).pipe(
      Effect.map((rows) => new Map(rows.map((row) => [row.userId, row.role]))),
      Effect.orDie
    )

const ownersOf = (roles: ReadonlyMap<string, string>) => [...roles].filter(([, role]) => role === "owner").map(([id]) => id)

layer(TestServerLayer, { excludeTestServices: true, timeout: "120 seconds" })("membership races", (it) => {
  it.effect("two concurrent ownership transfers: one wins, the other finds its caller no longer owner", () =>
    Effect.gen(function*() {
      for (let round = 0; round < ROUNDS; round++) {
        const { admin, member, owner, teamId } = yield* seedRoles()
        const client = yield* agentOf(owner, rw)
        const transfer = (userId: string) =>
          outcome(client.teams.updateMember({ params: { id: teamId, userId }, payload: { role: "owner" } }))
        const [toAdmin, toMember] = yield* race(transfer(admin.person.id), transfer(member.person.id))
        assert.sameMembers([toAdmin, toMember], ["ok", "Forbidden"])
        const roles = yield* rolesOf(teamId)
        const winner = toAdmin === "ok" ? admin : member
        assert.deepStrictEqual(ownersOf(roles), [winner.person.id])
        assert.strictEqual(roles.get(owner.person.id), "admin")
        assert.strictEqual(roles.size, 3)
      }
    }))

  it.effect("a removal racing a promotion of the same member: removed (promotion 404) or admin (removal 403)", () =>
    Effect.gen(function*() {
      for (let round = 0; round < ROUNDS; round++) {
        const { admin, member, owner, teamId } = yield* seedRoles()
        const ownerClient = yield* agentOf(owner, rw)
        const adminClient = yield* agentOf(admin, rw)
        const [removed, promoted] = yield* race(
          outcome(adminClient.teams.removeMember({ params: { id: teamId, userId: member.person.id } })),
          outcome(ownerClient.teams.updateMember({ params: { id: teamId, userId: member.person.id }, payload: { role: "admin" } }))
        )
        const roles = yield* rolesOf(teamId)
        if (removed === "ok") {
          assert.strictEqual(promoted, "NotFound")
          assert.isFalse(roles.has(member.person.id))
        } else {
          assert.deepStrictEqual([removed, promoted], ["Forbidden", "ok"])
          assert.strictEqual(roles.get(member.person.id), "admin")
        }
        assert.deepStrictEqual(ownersOf(roles), [owner.person.id])
      }
    }))

  it.effect("a transfer racing the new owner's leave: owner (leave 409) or gone (transfer 404), never ownerless", () =>
    Effect.gen(function*() {
      for (let round = 0; round < ROUNDS; round++) {
        const { admin, owner, teamId } = yield* seedRoles()
        const ownerClient = yield* agentOf(owner, rw)
        const adminClient = yield* agentOf(admin, rw)
        const [transferred, left] = yield* race(
          outcome(ownerClient.teams.updateMember({ params: { id: teamId, userId: admin.person.id }, payload: { role: "owner" } })),
          outcome(adminClient.teams.leave({ params: { id: teamId } }))
        )
        const roles = yield* rolesOf(teamId)
        if (transferred === "ok") {
          assert.strictEqual(left, "Conflict")
          assert.deepStrictEqual(ownersOf(roles), [admin.person.id])
        } else {
          assert.deepStrictEqual([transferred, left], ["NotFound", "ok"])
          assert.deepStrictEqual(ownersOf(roles), [owner.person.id])
          assert.isFalse(roles.has(admin.person.id))
        }
      }
    }))

  it.effect("a delete racing role changes and a leave ends without a deadlock or a 500", () =>
    Effect.gen(function*() {
      for (let round = 0; round < ROUNDS; round++) {
        const { admin, member, owner, teamId } = yield* seedRoles()
        const ownerClient = yield* agentOf(owner, rw)
        const memberClient = yield* agentOf(member, rw)
        const [deleted, demoted, left] = yield* Effect.all([
          outcome(ownerClient.teams.remove({ params: { id: teamId } })),
          outcome(ownerClient.teams.updateMember({ params: { id: teamId, userId: admin.person.id }, payload: { role: "member" } })),
          outcome(memberClient.teams.leave({ params: { id: teamId } }))
        ], { concurrency: "unbounded" })
        assert.strictEqual(deleted, "ok")
        assert.include(["ok", "NotFound"], demoted)
        assert.include(["ok", "NotFound"], left)
        assert.strictEqual((yield* rolesOf(teamId)).size, 0)
      }
    }))

  it.effect("two concurrent family creates for the last allowed one: exactly one is created", () =>
    Effect.gen(function*() {
      const someone = yield* makePerson("near-limit")
      for (let i = 0; i < MAX_FAMILIES_PER_PERSON - 1; i++) yield* seedTeam({ owner: someone })
      const client = yield* agentOf(someone, rw)
      const create = outcome(client.teams.create({ payload: { kind: "family", name: "Last" } }))
      const results = yield* race(create, create)
      assert.sameMembers(results, ["ok", "LimitReached"])
      assert.strictEqual((yield* client.teams.list()).items.length, MAX_FAMILIES_PER_PERSON)
    }))
})
