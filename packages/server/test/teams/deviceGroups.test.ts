/**
 * Device groups over HTTP with the typed client: the record, lists validated
 * against the team (404 naming the kind), duplicates collapsing, PATCH
 * replacing lists, the audit entry of each change, the limits, the cascades
 * when a person leaves or a device is deleted, a device or member gone
 * between the check and the write, and the devices of a team's members.
 */
import { assert, layer } from "@effect/vitest"
import { DEVICE_GROUP_MAX_MEMBERS } from "@herald/api"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { agentOf, seedRoles, seedTeam } from "../../../../test/support/teams.ts"
import type { Someone } from "../../../../test/support/teams.ts"
import { personClient, rawFetch, registerDevice, TestServerLayer } from "../../../../test/support/server.ts"
import { MAX_DEVICE_GROUPS } from "../../src/config/Limits.ts"
import { makeId } from "../../src/lib/Ids.ts"
import { AuditTrail } from "../../src/teams/AuditTrail.ts"
import { DeviceGroups } from "../../src/teams/DeviceGroups.ts"
import { DeviceGroupsRepo } from "../../src/teams/DeviceGroupsRepo.ts"
import { Membership } from "../../src/teams/Membership.ts"

const rw = ["teams:read", "teams:write"] as const

/** A phone of `someone`, registered through the Person API. */
const phoneOf = (someone: Someone) =>
  Effect.flatMap(personClient(someone.session), (app) => registerDevice({ app }, "grp-phone-")).pipe(Effect.orDie)

type AuditRow = { action: string; actorUserId: string | null; actorTokenId: string | null; targetType: string; targetId: string; metadata: unknown }

const auditOf = (teamId: string, targetId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<AuditRow>`SELECT action, actor_user_id, actor_token_id, target_type, target_id, metadata FROM team_audit
                  WHERE team_id = ${teamId} AND target_id = ${targetId} ORDER BY created_at, id`).pipe(Effect.orDie)

const countAudit = (teamId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ n: number }>`SELECT count(*)::int AS n FROM team_audit WHERE team_id = ${teamId} AND action LIKE 'group.%'`).pipe(
      Effect.map((rows) => rows[0]!.n),
      Effect.orDie
    )

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("device groups", (it) => {
  it.effect("create lists members and devices (duplicates collapse); get and list read it back; one audit entry", () =>
    Effect.gen(function*() {
      const { admin, member, owner, teamId } = yield* seedRoles()
      const ownerPhone = yield* phoneOf(owner)
      const memberPhone = yield* phoneOf(member)
      const client = yield* agentOf(admin, [...rw])
      const created = yield* client.deviceGroups.create({
        params: { id: teamId },
        payload: {
          name: "On call phones",
          memberIds: [member.person.id, owner.person.id, member.person.id],
          deviceIds: [memberPhone.id, ownerPhone.id, memberPhone.id]
        }
      })
      assert.match(created.id, /^grp_/)
      assert.strictEqual(created.teamId, teamId)
      assert.strictEqual(created.name, "On call phones")
      // Sorted by name: "member" before "owner".
      assert.deepStrictEqual(created.members.map((m) => ({ ...m })), [
        { userId: member.person.id, name: "member", email: member.person.email, image: null },
        { userId: owner.person.id, name: "owner", email: owner.person.email, image: null }
      ])
      assert.deepStrictEqual(created.devices.map((d) => ({ ...d })), [
        { id: memberPhone.id, deviceName: memberPhone.deviceName, userId: member.person.id, userName: "member" },
        { id: ownerPhone.id, deviceName: ownerPhone.deviceName, userId: owner.person.id, userName: "owner" }
      ])

      const memberClient = yield* agentOf(member, ["teams:read"])
      assert.deepStrictEqual(yield* memberClient.deviceGroups.get({ params: { id: teamId, groupId: created.id } }), created)
      const second = yield* client.deviceGroups.create({ params: { id: teamId }, payload: { name: "Empty" } })
      assert.deepStrictEqual(second.members, [])
      assert.deepStrictEqual(second.devices, [])
      const listed = yield* memberClient.deviceGroups.list({ params: { id: teamId } })
      assert.deepStrictEqual(listed.items.map((g) => g.id), [second.id, created.id])
      assert.deepStrictEqual(listed.items[1], created)

      const audit = yield* auditOf(teamId, created.id)
      assert.strictEqual(audit.length, 1)
      assert.strictEqual(audit[0]!.action, "group.created")
      assert.strictEqual(audit[0]!.actorUserId, admin.person.id)
      assert.match(audit[0]!.actorTokenId!, /^tok_/)
      assert.strictEqual(audit[0]!.targetType, "device_group")
      assert.deepStrictEqual(audit[0]!.metadata, {
        name: "On call phones",
        memberIds: [member.person.id, owner.person.id],
        deviceIds: [memberPhone.id, ownerPhone.id]
      })
    }))

  it.effect("members and devices are checked against the team: 404 naming the kind, and nothing is written", () =>
    Effect.gen(function*() {
      const { admin, member, outsider, owner, teamId } = yield* seedRoles()
      const memberPhone = yield* phoneOf(member)
      const outsiderPhone = yield* phoneOf(outsider)
      const client = yield* agentOf(owner, [...rw])
      type Body = { name: string; memberIds?: Array<string>; deviceIds?: Array<string> }
      const cases: ReadonlyArray<readonly [Body, string]> = [
        [{ name: "g", memberIds: [member.person.id, outsider.person.id] }, "Member not found."],
        [{ name: "g", memberIds: ["usr_doesnotexist"] }, "Member not found."],
        [{ name: "g", deviceIds: [memberPhone.id, outsiderPhone.id] }, "Device not found."],
        [{ name: "g", deviceIds: ["dev_doesnotexist"] }, "Device not found."]
      ]
      for (const [payload, error] of cases) {
        const failure = yield* Effect.flip(client.deviceGroups.create({ params: { id: teamId }, payload }))
        assert.strictEqual(failure._tag, "NotFound", JSON.stringify(payload))
        assert.strictEqual((failure as { error: string }).error, error)
      }
      assert.deepStrictEqual((yield* client.deviceGroups.list({ params: { id: teamId } })).items, [])
      assert.strictEqual(yield* countAudit(teamId), 0)

      // The same on PATCH, and the group keeps its lists.
      const group = yield* client.deviceGroups.create({ params: { id: teamId }, payload: { name: "g", memberIds: [admin.person.id] } })
      const patched = yield* Effect.flip(client.deviceGroups.update({
        params: { id: teamId, groupId: group.id },
        payload: { memberIds: [outsider.person.id] }
      }))
      assert.strictEqual((patched as { error: string }).error, "Member not found.")
      const patchedDevices = yield* Effect.flip(client.deviceGroups.update({
        params: { id: teamId, groupId: group.id },
        payload: { name: "renamed", deviceIds: [outsiderPhone.id] }
      }))
      assert.strictEqual((patchedDevices as { error: string }).error, "Device not found.")
      assert.deepStrictEqual(yield* client.deviceGroups.get({ params: { id: teamId, groupId: group.id } }), group)
      assert.strictEqual(yield* countAudit(teamId), 1)
    }))

  it.effect("PATCH renames and replaces only the lists it is given; each change is one audit entry", () =>
    Effect.gen(function*() {
      const { admin, member, owner, teamId } = yield* seedRoles()
      const [ownerPhone, memberPhone] = [yield* phoneOf(owner), yield* phoneOf(member)]
      const client = yield* agentOf(admin, [...rw])
      const group = yield* client.deviceGroups.create({
        params: { id: teamId },
        payload: { name: "Before", memberIds: [owner.person.id], deviceIds: [ownerPhone.id] }
      })
      const params = { id: teamId, groupId: group.id }

      const renamed = yield* client.deviceGroups.update({ params, payload: { name: "After" } })
      assert.strictEqual(renamed.name, "After")
      assert.deepStrictEqual(renamed.members, group.members)
      assert.deepStrictEqual(renamed.devices, group.devices)
      assert.strictEqual(renamed.createdAt, group.createdAt)
      assert.isAtLeast(Date.parse(renamed.updatedAt), Date.parse(group.updatedAt))

      const replaced = yield* client.deviceGroups.update({
        params,
        payload: { memberIds: [member.person.id, admin.person.id, member.person.id], deviceIds: [memberPhone.id] }
      })
      assert.strictEqual(replaced.name, "After")
      assert.deepStrictEqual(replaced.members.map((m) => m.userId), [admin.person.id, member.person.id])
      assert.deepStrictEqual(replaced.devices.map((d) => d.id), [memberPhone.id])

      const emptied = yield* client.deviceGroups.update({ params, payload: { deviceIds: [] } })
      assert.deepStrictEqual(emptied.devices, [])
      assert.deepStrictEqual(emptied.members.map((m) => m.userId), [admin.person.id, member.person.id])
      assert.deepStrictEqual(yield* client.deviceGroups.get({ params }), emptied)

      const audit = yield* auditOf(teamId, group.id)
      assert.deepStrictEqual(audit.map((a) => a.action), ["group.created", "group.updated", "group.updated", "group.updated"])
      assert.deepStrictEqual(audit.map((a) => a.metadata).slice(1), [
        { name: "After" },
        { memberIds: [member.person.id, admin.person.id], deviceIds: [memberPhone.id] },
        { deviceIds: [] }
      ])
    }))

  it.effect("DELETE removes the group (then 404) with one audit entry; another team's group is 404 everywhere", () =>
    Effect.gen(function*() {
      const { admin, owner, teamId } = yield* seedRoles()
      const client = yield* agentOf(owner, [...rw])
      const group = yield* client.deviceGroups.create({ params: { id: teamId }, payload: { name: "Doomed", memberIds: [admin.person.id] } })

      // A group of a team the caller also administers, reached through this team's path.
      const other = yield* seedTeam({ owner, name: "Other" })
      const foreign = yield* client.deviceGroups.create({ params: { id: other.teamId }, payload: { name: "Foreign" } })
      const through = { id: teamId, groupId: foreign.id }
      for (
        const attempt of [
          Effect.asVoid(client.deviceGroups.get({ params: through })),
          Effect.asVoid(client.deviceGroups.update({ params: through, payload: { name: "x" } })),
          Effect.asVoid(client.deviceGroups.remove({ params: through }))
        ]
      ) {
        const failure = yield* Effect.flip(attempt)
        assert.strictEqual(failure._tag, "NotFound")
        assert.strictEqual((failure as { error: string }).error, "Device group not found.")
      }
      assert.strictEqual((yield* client.deviceGroups.get({ params: { id: other.teamId, groupId: foreign.id } })).name, "Foreign")

      assert.deepStrictEqual(yield* client.deviceGroups.remove({ params: { id: teamId, groupId: group.id } }), { ok: true })
      assert.strictEqual((yield* Effect.flip(client.deviceGroups.get({ params: { id: teamId, groupId: group.id } })))._tag, "NotFound")
      assert.strictEqual((yield* Effect.flip(client.deviceGroups.remove({ params: { id: teamId, groupId: group.id } })))._tag, "NotFound")
      const audit = yield* auditOf(teamId, group.id)
      assert.deepStrictEqual(audit.map((a) => [a.action, a.metadata]), [
        ["group.created", { name: "Doomed", memberIds: [admin.person.id], deviceIds: [] }],
        ["group.deleted", { name: "Doomed" }]
      ])
      // The people stay in the team.
      const sql = yield* SqlClient.SqlClient
      const left = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM team_members WHERE team_id = ${teamId}`
      assert.strictEqual(left[0]!.n, 3)
    }))

  it.effect("a person leaving drops out of the team's groups with their devices; a deleted device drops out", () =>
    Effect.gen(function*() {
      const { admin, member, owner, teamId } = yield* seedRoles()
      const [memberPhone, ownerPhone, adminPhone] = [yield* phoneOf(member), yield* phoneOf(owner), yield* phoneOf(admin)]
      const client = yield* agentOf(owner, [...rw])
      const group = yield* client.deviceGroups.create({
        params: { id: teamId },
        payload: { name: "All", memberIds: [member.person.id, owner.person.id], deviceIds: [memberPhone.id, ownerPhone.id, adminPhone.id] }
      })
      // The member leaves the team themselves.
      const memberClient = yield* agentOf(member, ["teams:write"])
      yield* memberClient.teams.leave({ params: { id: teamId } })
      const afterLeave = yield* client.deviceGroups.get({ params: { id: teamId, groupId: group.id } })
      assert.deepStrictEqual(afterLeave.members.map((m) => m.userId), [owner.person.id])
      assert.deepStrictEqual(afterLeave.devices.map((d) => d.id).sort(), [adminPhone.id, ownerPhone.id].sort())

      // The admin deletes a phone (Person API): it leaves every group.
      const adminApp = yield* personClient(admin.session)
      yield* adminApp.devices.remove({ params: { id: adminPhone.id } })
      const afterDelete = yield* client.deviceGroups.get({ params: { id: teamId, groupId: group.id } })
      assert.deepStrictEqual(afterDelete.devices.map((d) => d.id), [ownerPhone.id])
      // Someone no longer in the team cannot be put back.
      const failure = yield* Effect.flip(client.deviceGroups.update({
        params: { id: teamId, groupId: group.id },
        payload: { memberIds: [member.person.id] }
      }))
      assert.strictEqual((failure as { error: string }).error, "Member not found.")
    }))

  it.effect("limits: groups per team (422 with limit), name length and list sizes (400 VALIDATION_FAILED)", () =>
    Effect.gen(function*() {
      const { owner, teamId } = yield* seedRoles()
      const client = yield* agentOf(owner, [...rw])
      const sql = yield* SqlClient.SqlClient
      for (let i = 0; i < MAX_DEVICE_GROUPS - 1; i++) {
        const id = yield* makeId("grp")
        yield* sql`INSERT INTO device_groups (id, team_id, name) VALUES (${id}, ${teamId}, ${`seeded ${i}`})`
      }
      yield* client.deviceGroups.create({ params: { id: teamId }, payload: { name: "the last one" } })
      const full = yield* Effect.flip(client.deviceGroups.create({ params: { id: teamId }, payload: { name: "one too many" } }))
      assert.strictEqual(full._tag, "LimitReached")
      assert.strictEqual((full as { limit: number }).limit, MAX_DEVICE_GROUPS)
      assert.strictEqual((full as { code: string }).code, "LIMIT_REACHED")

      const { owner: other, teamId: otherTeam } = yield* seedRoles()
      const headers = { authorization: `Bearer ${yield* secretOf(other)}`, "content-type": "application/json" }
      const post = (body: unknown) =>
        rawFetch(`/api/agent/teams/${otherTeam}/groups`, { method: "POST", headers, body: JSON.stringify(body) })
      const tooMany = Array.from({ length: DEVICE_GROUP_MAX_MEMBERS + 1 }, (_, i) => `usr_${i}`)
      for (const body of [{ name: "" }, { name: "x".repeat(101) }, { name: "g", memberIds: tooMany }, {
        name: "g",
        deviceIds: tooMany.map((_, i) => `dev_${i}`)
      }, { name: "g", memberIds: ["not-an-id"] }, {}]) {
        const answer = yield* post(body)
        assert.strictEqual(answer.status, 400, JSON.stringify(body).slice(0, 80))
        assert.strictEqual((answer.body as { code: string }).code, "VALIDATION_FAILED")
      }
      assert.strictEqual((yield* post({ name: "x".repeat(100) })).status, 201)
    }))

  it.effect("GET /teams/{id}/devices: every device of the team's members with its owner, none of anyone else's", () =>
    Effect.gen(function*() {
      const { admin, member, outsider, owner, teamId } = yield* seedRoles()
      const ownerPhone = yield* phoneOf(owner)
      const memberPhone = yield* phoneOf(member)
      const memberTablet = yield* Effect.flatMap(personClient(member.session), (app) => registerDevice({ app }, "grp-tab-", "android"))
      yield* phoneOf(outsider)
      const client = yield* agentOf(admin, ["teams:read"])
      const { items } = yield* client.deviceGroups.devices({ params: { id: teamId } })
      assert.deepStrictEqual(items.map((d) => d.id), [memberTablet.id, memberPhone.id, ownerPhone.id])
      assert.deepStrictEqual({ ...items[0]! }, {
        id: memberTablet.id,
        deviceName: memberTablet.deviceName,
        platform: "android",
        active: true,
        userId: member.person.id,
        userName: "member",
        lastSeenAt: memberTablet.lastSeenAt
      })
      assert.strictEqual(items[2]!.userId, owner.person.id)
    }))

  it.effect("the Team record's deviceGroupCount follows creates and deletes", () =>
    Effect.gen(function*() {
      const { member, owner, teamId } = yield* seedRoles()
      const client = yield* agentOf(owner, [...rw])
      const memberClient = yield* agentOf(member, ["teams:read"])
      const count = Effect.map(memberClient.teams.get({ params: { id: teamId } }), (team) => team.deviceGroupCount)
      assert.strictEqual(yield* count, 0)
      const first = yield* client.deviceGroups.create({ params: { id: teamId }, payload: { name: "one" } })
      yield* client.deviceGroups.create({ params: { id: teamId }, payload: { name: "two" } })
      assert.strictEqual(yield* count, 2)
      // Another team's groups are not counted.
      const other = yield* seedTeam({ owner })
      yield* client.deviceGroups.create({ params: { id: other.teamId }, payload: { name: "elsewhere" } })
      yield* client.deviceGroups.remove({ params: { id: teamId, groupId: first.id } })
      assert.strictEqual(yield* count, 1)
    }))

  it.effect("a device deleted or a person gone between the check and the write: 404, nothing written", () =>
    Effect.gen(function*() {
      const { admin, member, owner, teamId } = yield* seedRoles()
      const memberPhone = yield* phoneOf(member)
      const sql = yield* SqlClient.SqlClient
      // The checks pass, then the row they vouched for goes (as a concurrent delete committed just then would).
      const racing = Layer.effect(DeviceGroupsRepo, Effect.gen(function*() {
        const real = yield* DeviceGroupsRepo
        return DeviceGroupsRepo.of({
          ...real,
          membersAmong: (t, ids) =>
            Effect.tap(real.membersAmong(t, ids), () =>
              ids.length === 0 ? Effect.void : sql`DELETE FROM team_members WHERE team_id = ${t} AND ${sql.in("user_id", [...ids])}`.pipe(Effect.orDie)),
          devicesAmong: (t, ids) =>
            Effect.tap(real.devicesAmong(t, ids), () =>
              ids.length === 0 ? Effect.void : sql`DELETE FROM devices WHERE ${sql.in("id", [...ids])}`.pipe(Effect.orDie))
        })
      })).pipe(Layer.provide(DeviceGroupsRepo.layer))
      // Fresh: the running server already built the service on the real repo, and layers are shared by default.
      const service = Layer.fresh(DeviceGroups.layerNoDeps).pipe(Layer.provide([racing, Membership.layer, AuditTrail.layer]))
      const caller = { userId: owner.person.id, actor: { userId: owner.person.id, tokenId: null, ip: null, userAgent: null } }

      const outcomes = yield* Effect.gen(function*() {
        const groups = yield* DeviceGroups
        return [
          yield* Effect.flip(groups.create(caller, teamId, { name: "g", deviceIds: [memberPhone.id] })),
          yield* Effect.flip(groups.create(caller, teamId, { name: "g", memberIds: [admin.person.id] }))
        ]
      }).pipe(Effect.provide(service))
      assert.deepStrictEqual(outcomes.map((e) => [e._tag, (e as { error: string }).error]), [
        ["NotFound", "Device not found."],
        ["NotFound", "Member not found."]
      ])
      // Both transactions rolled back: no group, no audit entry, and the racing deletes undone with them.
      const groups = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM device_groups WHERE team_id = ${teamId}`
      assert.strictEqual(groups[0]!.n, 0)
      assert.strictEqual(yield* countAudit(teamId), 0)
      const phone = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM devices WHERE id = ${memberPhone.id}`
      assert.strictEqual(phone[0]!.n, 1)
      const stillAdmin = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM team_members WHERE team_id = ${teamId} AND user_id = ${admin.person.id}`
      assert.strictEqual(stillAdmin[0]!.n, 1)
    }))
})

/** An API token secret (teams read and write) of `someone`, for raw requests. */
const secretOf = (someone: Someone) =>
  Effect.flatMap(personClient(someone.session), (app) =>
    app.tokens.create({ payload: { name: "raw", scopes: ["teams:read", "teams:write"] } })).pipe(
      Effect.map((created) => created.secret),
      Effect.orDie
    )
