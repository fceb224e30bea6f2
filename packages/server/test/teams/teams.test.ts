/**
 * Teams and families over HTTP with the typed client: creating a family (and
 * refusing teams), the record's counts and seats as every read computes them,
 * the DNS challenge shown to the owner only, settings, ownership transfer,
 * roles, leaving, removal and deletion with what goes back to whom, and the
 * audit entry each change writes.
 */
import { assert, layer } from "@effect/vitest"
import type { Scope } from "@herald/api"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { MAX_FAMILIES_PER_PERSON } from "../../src/config/Limits.ts"
import { makeId } from "../../src/lib/Ids.ts"
import { operatorActor } from "../../src/teams/AuditTrail.ts"
import { Teams } from "../../src/teams/Teams.ts"
import { makePerson, personClient, rawFetch, TestServerLayer } from "../../../../test/support/server.ts"
import { agentOf, seedRoles, seedTeam } from "../../../../test/support/teams.ts"
import type { Someone } from "../../../../test/support/teams.ts"

const rw: ReadonlyArray<Scope> = ["teams:read", "teams:write"]

/** The team's audit log, oldest first: what each change wrote. */
const auditOf = (teamId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ action: string; targetType: string | null; targetId: string | null; actorUserId: string | null; metadata: unknown }>`
      SELECT action, target_type, target_id, actor_user_id, metadata FROM team_audit
      WHERE team_id = ${teamId} ORDER BY created_at, id`).pipe(Effect.orDie)

const actions = (teamId: string) => Effect.map(auditOf(teamId), (rows) => rows.map((row) => row.action))

/** A service of `someone`'s, shared with `teamId`, and an app of theirs in it (written as the sharing routes would). */
const shareInto = (someone: Someone, teamId: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const serviceId = yield* makeId("svc")
    const appId = yield* makeId("app")
    yield* sql`INSERT INTO services (id, user_id, title, token_hash, family_id)
               VALUES (${serviceId}, ${someone.person.id}, 'Doorbell', ${`hash-${serviceId}`}, ${teamId})`
    yield* sql`INSERT INTO apps (id, user_id, team_id, name, url, origin, url_key)
               VALUES (${appId}, ${someone.person.id}, ${teamId}, 'Board', 'https://board.example.test/',
                       'https://board.example.test', ${`https://board.example.test/${appId}`})`
    return { serviceId, appId }
  }).pipe(Effect.orDie)

const sharedState = (ids: { readonly serviceId: string; readonly appId: string }) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [service] = yield* sql<{ familyId: string | null }>`SELECT family_id FROM services WHERE id = ${ids.serviceId}`
    const [app] = yield* sql<{ teamId: string | null }>`SELECT team_id FROM apps WHERE id = ${ids.appId}`
    return { familyId: service!.familyId, teamId: app!.teamId }
  }).pipe(Effect.orDie)

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("teams and families", (it) => {
  it.effect("POST /teams creates a family with the caller as owner; a team or no kind is 403", () =>
    Effect.gen(function*() {
      const someone = yield* makePerson("founder")
      const client = yield* agentOf(someone, rw)
      const family = yield* client.teams.create({ payload: { kind: "family", name: "The Smiths" } })
      assert.match(family.id, /^team_/)
      assert.strictEqual(family.kind, "family")
      assert.strictEqual(family.plan, "free")
      assert.strictEqual(family.role, "owner")
      assert.strictEqual(family.memberCount, 1)
      assert.deepStrictEqual({ ...family.seats }, { used: 1, available: 3, billable: 0 })
      assert.isNull(family.domainVerification)
      const [entry] = yield* auditOf(family.id)
      assert.strictEqual(entry!.action, "team.created")
      assert.strictEqual(entry!.actorUserId, someone.person.id)

      const team = yield* Effect.flip(client.teams.create({ payload: { kind: "team", name: "Acme" } }))
      assert.strictEqual(team._tag, "Forbidden")
      const none = yield* Effect.flip(client.teams.create({ payload: { name: "Nameless kind" } }))
      assert.strictEqual(none._tag, "Forbidden")

      const listed = yield* client.teams.list()
      assert.deepStrictEqual(listed.items.map((t) => t.id), [family.id])
    }))

  it.effect("a person belongs to a bounded number of families: one more is 422 LIMIT_REACHED", () =>
    Effect.gen(function*() {
      const someone = yield* makePerson("joiner")
      const other = yield* makePerson("other-owner")
      // Belonging counts, not only owning: half owned, half joined.
      for (let i = 0; i < MAX_FAMILIES_PER_PERSON; i++) {
        yield* i % 2 === 0 ? seedTeam({ owner: someone }) : seedTeam({ owner: other, members: [{ person: someone, role: "member" }] })
      }
      // A workplace team does not count against families.
      yield* seedTeam({ owner: other, kind: "team", members: [{ person: someone, role: "member" }] })
      const client = yield* agentOf(someone, rw)
      const refused = yield* Effect.flip(client.teams.create({ payload: { kind: "family", name: "One too many" } }))
      assert.strictEqual(refused._tag, "LimitReached")
      assert.strictEqual((refused as { limit?: number }).limit, MAX_FAMILIES_PER_PERSON)
      assert.strictEqual((yield* client.teams.list()).items.length, MAX_FAMILIES_PER_PERSON + 1)
    }))

  it.effect("GET /teams lists the caller's teams newest first; GET /teams/{id} adds the members", () =>
    Effect.gen(function*() {
      const { admin, member, outsider, owner, teamId } = yield* seedRoles()
      const newer = yield* seedTeam({ owner: admin, kind: "team", name: "Acme" })
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE teams SET created_at = now() - interval '1 day' WHERE id = ${teamId}`.pipe(Effect.orDie)

      const adminClient = yield* agentOf(admin, rw)
      const listed = yield* adminClient.teams.list()
      assert.deepStrictEqual(listed.items.map((t) => [t.id, t.role]), [[newer.teamId, "owner"], [teamId, "admin"]])
      assert.deepStrictEqual((yield* (yield* agentOf(outsider, rw)).teams.list()).items, [])

      const detail = yield* (yield* agentOf(member, rw)).teams.get({ params: { id: teamId } })
      assert.strictEqual(detail.role, "member")
      assert.deepStrictEqual(detail.members.map((m) => [m.userId, m.role]), [
        [owner.person.id, "owner"],
        [admin.person.id, "admin"],
        [member.person.id, "member"]
      ])
      assert.strictEqual(detail.members[0]!.email, owner.person.email)
      assert.strictEqual(detail.members[0]!.name, owner.person.name)
    }))

  it.effect("counts and seats are true at every read: members, apps, device groups, pending invites", () =>
    Effect.gen(function*() {
      const { admin, member, owner, teamId } = yield* seedRoles()
      const sql = yield* SqlClient.SqlClient
      const client = yield* agentOf(owner, rw)
      const read = client.teams.get({ params: { id: teamId } })
      let team = yield* read
      assert.deepStrictEqual([team.memberCount, team.appCount, team.deviceGroupCount, team.oncallGroupCount], [3, 0, 0, 0])
      assert.deepStrictEqual({ ...team.seats }, { used: 3, available: 1, billable: 0 })

      yield* shareInto(member, teamId)
      yield* shareInto(admin, teamId)
      const groupId = yield* makeId("grp")
      yield* sql`INSERT INTO device_groups (id, team_id, name) VALUES (${groupId}, ${teamId}, 'Kitchen')`.pipe(Effect.orDie)
      // A pending invite takes a seat; an expired, revoked or accepted one does not.
      const invite = (code: string, state: { readonly revoked?: boolean; readonly accepted?: boolean } = {}) =>
        Effect.flatMap(makeId("inv"), (id) =>
          sql`INSERT INTO team_invites (id, team_id, code_hash, email, role, invited_by, expires_at, revoked_at, accepted_at)
              VALUES (${id}, ${teamId}, ${`${code}-${id}`}, 'x@example.test', 'member', ${owner.person.id}, now() + interval '7 days',
                      ${state.revoked === true ? sql`now()` : sql`NULL`}, ${state.accepted === true ? sql`now()` : sql`NULL`})`).pipe(
            Effect.orDie
          )
      yield* invite("pending")
      yield* invite("revoked", { revoked: true })
      yield* invite("accepted", { accepted: true })
      yield* invite("expired")
      yield* sql`UPDATE team_invites SET expires_at = now() - interval '1 minute' WHERE code_hash LIKE 'expired-%' AND team_id = ${teamId}`.pipe(Effect.orDie)

      team = yield* read
      assert.deepStrictEqual([team.memberCount, team.appCount, team.deviceGroupCount], [3, 2, 1])
      assert.deepStrictEqual({ ...team.seats }, { used: 4, available: 0, billable: 0 })

      yield* (yield* agentOf(member, rw)).teams.leave({ params: { id: teamId } })
      team = yield* read
      assert.deepStrictEqual([team.memberCount, team.appCount], [2, 1])
      assert.deepStrictEqual({ ...team.seats }, { used: 3, available: 1, billable: 0 })

      // A workplace team: no cap, and decisions.md bills what it uses.
      const work = yield* seedTeam({ owner, kind: "team", members: [{ person: member, role: "member" }] })
      const workTeam = yield* client.teams.get({ params: { id: work.teamId } })
      assert.strictEqual(workTeam.plan, "team")
      assert.deepStrictEqual({ ...workTeam.seats }, { used: 2, available: null, billable: 2 })
    }))

  it.effect("the DNS challenge is shown to the owner only, and only while a domain is pending", () =>
    Effect.gen(function*() {
      const { admin, owner, teamId } = yield* seedRoles("team")
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE teams SET pending_domain = 'acme.example', domain_token = 'tok123' WHERE id = ${teamId}`.pipe(Effect.orDie)
      const asOwner = yield* (yield* agentOf(owner, rw)).teams.get({ params: { id: teamId } })
      assert.strictEqual(asOwner.pendingDomain, "acme.example")
      assert.deepStrictEqual({ ...asOwner.domainVerification! }, {
        host: "_herald-verification.acme.example",
        value: "herald-verify=tok123"
      })
      const adminClient = yield* agentOf(admin, rw)
      const asAdmin = yield* adminClient.teams.get({ params: { id: teamId } })
      assert.strictEqual(asAdmin.pendingDomain, "acme.example")
      assert.isNull(asAdmin.domainVerification)
      assert.isNull((yield* adminClient.teams.list()).items[0]!.domainVerification)

      yield* sql`UPDATE teams SET pending_domain = NULL, verified_domain = 'acme.example' WHERE id = ${teamId}`.pipe(Effect.orDie)
      const verified = yield* (yield* agentOf(owner, rw)).teams.get({ params: { id: teamId } })
      assert.strictEqual(verified.verifiedDomain, "acme.example")
      assert.isNull(verified.domainVerification)
    }))

  it.effect("PATCH renames (admin) and sets auto-join and retention (owner), each change one audit entry", () =>
    Effect.gen(function*() {
      const { admin, owner, teamId } = yield* seedRoles()
      const adminClient = yield* agentOf(admin, rw)
      const ownerClient = yield* agentOf(owner, rw)
      const renamed = yield* adminClient.teams.update({ params: { id: teamId }, payload: { name: "The Joneses" } })
      assert.strictEqual(renamed.name, "The Joneses")
      assert.strictEqual(renamed.role, "admin")
      // A body mixing a rename with an owner's setting needs the owner.
      const mixed = yield* Effect.flip(adminClient.teams.update({ params: { id: teamId }, payload: { name: "X", retentionDays: 30 } }))
      assert.strictEqual(mixed._tag, "Forbidden")
      const set = yield* ownerClient.teams.update({ params: { id: teamId }, payload: { autoJoinVerifiedDomain: true, retentionDays: 30 } })
      assert.isTrue(set.autoJoinVerifiedDomain)
      assert.strictEqual(set.retentionDays, 30)
      assert.strictEqual(set.name, "The Joneses")
      const cleared = yield* ownerClient.teams.update({ params: { id: teamId }, payload: { retentionDays: null } })
      assert.isNull(cleared.retentionDays)
      // Out of 1..3650: the server refuses it (sent raw: the typed client would not send it).
      const token = yield* Effect.flatMap(personClient(owner.session), (app) =>
        app.tokens.create({ payload: { name: "raw", scopes: [...rw] } })).pipe(Effect.orDie)
      for (const retentionDays of [0, 3651, 1.5]) {
        const invalid = yield* rawFetch(`/api/agent/teams/${teamId}`, {
          method: "PATCH",
          headers: { authorization: `Bearer ${token.secret}`, "content-type": "application/json" },
          body: JSON.stringify({ retentionDays })
        })
        assert.strictEqual(invalid.status, 400, String(retentionDays))
      }
      assert.isNull((yield* ownerClient.teams.get({ params: { id: teamId } })).retentionDays)

      const log = yield* auditOf(teamId)
      assert.deepStrictEqual(log.map((e) => e.action), ["team.renamed", "team.updated", "team.updated"])
      assert.deepStrictEqual(log[0]!.metadata, { from: "Test team", to: "The Joneses" })
      assert.strictEqual(log[0]!.actorUserId, admin.person.id)
    }))

  it.effect("ownership transfer: the new owner, the old one an admin, one owner throughout; role changes", () =>
    Effect.gen(function*() {
      const { admin, member, outsider, owner, teamId } = yield* seedRoles()
      const ownerClient = yield* agentOf(owner, rw)
      const promoted = yield* ownerClient.teams.updateMember({ params: { id: teamId, userId: member.person.id }, payload: { role: "admin" } })
      assert.strictEqual(promoted.members.find((m) => m.userId === member.person.id)!.role, "admin")
      // The owner keeps their role unless they transfer it; a non-member is 404.
      const self = yield* Effect.flip(ownerClient.teams.updateMember({ params: { id: teamId, userId: owner.person.id }, payload: { role: "admin" } }))
      assert.strictEqual(self._tag, "Conflict")
      const stranger = yield* Effect.flip(ownerClient.teams.updateMember({ params: { id: teamId, userId: outsider.person.id }, payload: { role: "member" } }))
      assert.strictEqual(stranger._tag, "NotFound")

      const transferred = yield* ownerClient.teams.updateMember({ params: { id: teamId, userId: admin.person.id }, payload: { role: "owner" } })
      assert.strictEqual(transferred.role, "admin")
      assert.deepStrictEqual(transferred.members.filter((m) => m.role === "owner").map((m) => m.userId), [admin.person.id])
      assert.strictEqual(transferred.members.find((m) => m.userId === owner.person.id)!.role, "admin")
      // The old owner no longer changes roles; the new one does.
      const former = yield* Effect.flip(ownerClient.teams.updateMember({ params: { id: teamId, userId: member.person.id }, payload: { role: "member" } }))
      assert.strictEqual(former._tag, "Forbidden")
      yield* (yield* agentOf(admin, rw)).teams.updateMember({ params: { id: teamId, userId: member.person.id }, payload: { role: "member" } })

      const log = yield* auditOf(teamId)
      assert.deepStrictEqual(log.map((e) => e.action), ["member.role_changed", "team.ownership_transferred", "member.role_changed"])
      assert.deepStrictEqual(log[0]!.metadata, { from: "member", to: "admin" })
      assert.strictEqual(log[1]!.targetId, admin.person.id)
      assert.strictEqual(log[2]!.actorUserId, admin.person.id)
    }))

  it.effect("leave: the owner must transfer first; a member's shared services and apps come back to them", () =>
    Effect.gen(function*() {
      const { member, owner, teamId } = yield* seedRoles()
      const shared = yield* shareInto(member, teamId)
      const theirs = yield* shareInto(owner, teamId)
      const sql = yield* SqlClient.SqlClient
      const groupId = yield* makeId("grp")
      yield* sql`INSERT INTO device_groups (id, team_id, name) VALUES (${groupId}, ${teamId}, 'Everyone')`.pipe(Effect.orDie)
      yield* sql`INSERT INTO device_group_members (group_id, team_id, user_id) VALUES (${groupId}, ${teamId}, ${member.person.id})`.pipe(Effect.orDie)

      const refused = yield* Effect.flip((yield* agentOf(owner, rw)).teams.leave({ params: { id: teamId } }))
      assert.strictEqual(refused._tag, "Conflict")
      assert.include((refused as { error?: string }).error, "transfer ownership")

      const memberClient = yield* agentOf(member, rw)
      yield* memberClient.teams.leave({ params: { id: teamId } })
      assert.deepStrictEqual(yield* sharedState(shared), { familyId: null, teamId: null })
      // Only the leaver's: the owner's stay shared.
      assert.deepStrictEqual(yield* sharedState(theirs), { familyId: teamId, teamId })
      const [left] = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM device_group_members WHERE user_id = ${member.person.id}`.pipe(Effect.orDie)
      assert.strictEqual(left!.n, 0)
      assert.strictEqual((yield* Effect.flip(memberClient.teams.get({ params: { id: teamId } })))._tag, "NotFound")
      assert.sameMembers(yield* actions(teamId), ["service.unshared", "app.unshared", "member.left"])
      // Leaving twice: no longer a member.
      assert.strictEqual((yield* Effect.flip(memberClient.teams.leave({ params: { id: teamId } })))._tag, "NotFound")
    }))

  it.effect("removal: admins remove members, only the owner removes admins, the owner is never removed", () =>
    Effect.gen(function*() {
      const { admin, member, outsider, owner, teamId } = yield* seedRoles()
      const other = yield* makePerson("second-admin")
      const sql = yield* SqlClient.SqlClient
      yield* sql`INSERT INTO team_members (team_id, user_id, role) VALUES (${teamId}, ${other.person.id}, 'admin')`.pipe(Effect.orDie)
      const shared = yield* shareInto(member, teamId)
      const adminClient = yield* agentOf(admin, rw)
      const ownerClient = yield* agentOf(owner, rw)
      const removing = (client: typeof adminClient, userId: string) =>
        Effect.flip(client.teams.removeMember({ params: { id: teamId, userId } })).pipe(Effect.map((e) => e._tag))

      assert.strictEqual(yield* removing(adminClient, owner.person.id), "Forbidden")
      assert.strictEqual(yield* removing(ownerClient, owner.person.id), "Forbidden")
      assert.strictEqual(yield* removing(adminClient, other.person.id), "Forbidden")
      assert.strictEqual(yield* removing(adminClient, admin.person.id), "Conflict")
      assert.strictEqual(yield* removing(adminClient, outsider.person.id), "NotFound")

      yield* adminClient.teams.removeMember({ params: { id: teamId, userId: member.person.id } })
      assert.deepStrictEqual(yield* sharedState(shared), { familyId: null, teamId: null })
      yield* ownerClient.teams.removeMember({ params: { id: teamId, userId: other.person.id } })
      const team = yield* ownerClient.teams.get({ params: { id: teamId } })
      assert.sameMembers(team.members.map((m) => m.userId), [owner.person.id, admin.person.id])
      const log = yield* auditOf(teamId)
      assert.sameMembers(log.map((e) => e.action), ["service.unshared", "app.unshared", "member.removed", "member.removed"])
      assert.strictEqual(log.find((e) => e.action === "member.removed" && e.targetId === member.person.id)!.actorUserId, admin.person.id)
    }))

  it.effect("delete: the owner only; apps and shared services go back to whoever added them", () =>
    Effect.gen(function*() {
      const { admin, member, owner, teamId } = yield* seedRoles()
      const shared = yield* shareInto(member, teamId)
      const forbidden = yield* Effect.flip((yield* agentOf(admin, rw)).teams.remove({ params: { id: teamId } }))
      assert.strictEqual(forbidden._tag, "Forbidden")
      const ownerClient = yield* agentOf(owner, rw)
      yield* ownerClient.teams.remove({ params: { id: teamId } })
      assert.deepStrictEqual(yield* sharedState(shared), { familyId: null, teamId: null })
      assert.strictEqual((yield* Effect.flip(ownerClient.teams.get({ params: { id: teamId } })))._tag, "NotFound")
      assert.deepStrictEqual((yield* ownerClient.teams.list()).items, [])
      // The log goes with the team (nothing records its deletion there).
      assert.deepStrictEqual(yield* actions(teamId), [])
    }))

  it.effect("an operator-created team is a workplace team owned by the named person, logged as the operator", () =>
    Effect.gen(function*() {
      const owner = yield* makePerson("ceo")
      const teams = yield* Teams
      const team = yield* teams.createTeam(operatorActor, { name: "Acme", ownerId: owner.person.id })
      assert.deepStrictEqual([team.kind, team.plan, team.role, team.memberCount], ["team", "team", "owner", 1])
      const [entry] = yield* auditOf(team.id)
      assert.strictEqual(entry!.action, "team.created")
      assert.isNull(entry!.actorUserId)
      const fromApi = yield* (yield* agentOf(owner, rw)).teams.get({ params: { id: team.id } })
      assert.strictEqual(fromApi.name, "Acme")
    }))
})
