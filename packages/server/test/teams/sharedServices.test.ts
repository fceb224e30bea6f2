/**
 * Webhook services shared with a family, over HTTP with the typed client:
 * who may do what (one access table), deliveries to every member's devices
 * with an own inbox copy each, unsharing, sharing with a family one is not
 * in, the audit entries, and a creator leaving the family.
 */
import { assert, layer } from "@effect/vitest"
import type { Scope } from "@herald/api"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { eventually } from "../../../../test/support/eventually.ts"
import { makePerson, personClient, rawFetch, registerDevice, TestServerLayer } from "../../../../test/support/server.ts"
import { agentOf, seedTeam } from "../../../../test/support/teams.ts"
import type { Someone } from "../../../../test/support/teams.ts"

const scopes: ReadonlyArray<Scope> = ["services:read", "services:write", "events:read", "inbox:read", "inbox:write", "teams:write"]

type Client = Effect.Success<ReturnType<typeof agentOf>>

const hookPath = (webhookUrl: string) => new URL(webhookUrl).pathname
const deliver = (webhookUrl: string, body: unknown) =>
  rawFetch(hookPath(webhookUrl), { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) })

/** The status an Agent API call answered: 200 or its error's. */
const statusOf = <A>(call: Effect.Effect<A, { readonly _tag: string }>) =>
  Effect.map(Effect.result(call), (result) => {
    if (result._tag === "Success") return 200
    const status = ({ NotFound: 404, Forbidden: 403, BadRequest: 400, MissingScope: 403 } as Record<string, number>)[result.failure._tag]
    if (status === undefined) throw new Error(`unexpected ${result.failure._tag}`)
    return status
  })

/**
 * A family: its owner, an admin, the service's creator and a plain member, each with an agent;
 * and an outsider. The creator is a member, not the owner, so the owner's rights are the family's.
 */
const family = Effect.gen(function*() {
  const people = {
    owner: yield* makePerson("family-owner"),
    admin: yield* makePerson("family-admin"),
    creator: yield* makePerson("creator"),
    member: yield* makePerson("member"),
    outsider: yield* makePerson("outsider")
  }
  const { teamId } = yield* seedTeam({
    owner: people.owner,
    name: "The Smiths",
    members: [
      { person: people.admin, role: "admin" },
      { person: people.creator, role: "member" },
      { person: people.member, role: "member" }
    ]
  })
  const agents = {
    owner: yield* agentOf(people.owner, scopes),
    admin: yield* agentOf(people.admin, scopes),
    creator: yield* agentOf(people.creator, scopes),
    member: yield* agentOf(people.member, scopes),
    outsider: yield* agentOf(people.outsider, scopes)
  }
  return { teamId, people, agents }
})

/** A service of `creator`, shared with the family. */
const sharedService = (creator: Client, teamId: string, title = "Home alarm") =>
  Effect.gen(function*() {
    const created = yield* creator.services.create({ payload: { title } })
    const shared = yield* creator.services.share({ params: { id: created.service.id }, payload: { familyId: teamId } })
    assert.strictEqual(shared.familyId, teamId)
    return created
  })

const phoneOf = (someone: Someone) =>
  Effect.gen(function*() {
    const app = yield* personClient(someone.session)
    const device = yield* registerDevice({ app }, "iphone-")
    return { app, device }
  })

const pushesTo = (phone: Effect.Success<ReturnType<typeof phoneOf>>) =>
  Effect.map(phone.app.devices.deliveries({ params: { id: phone.device.id } }), (r) => r.items)

const auditOf = (teamId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ action: string; actorUserId: string | null; targetId: string | null }>`
      SELECT action, actor_user_id, target_id FROM team_audit WHERE team_id = ${teamId} ORDER BY created_at, id`)

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("webhook services shared with a family", (it) => {
  it.effect("access table: each route by creator, family owner, admin, member and outsider", () =>
    Effect.gen(function*() {
      const { agents, teamId } = yield* family
      type Role = keyof typeof agents
      type Route = (client: Client, id: string) => Effect.Effect<unknown, { readonly _tag: string }>
      // List answers 200 to everyone: a service it leaves out counts as 404 here.
      const listed: Route = (c, id) =>
        Effect.flatMap(c.services.list(), (l) =>
          l.items.some((s) => s.id === id) ? Effect.void : Effect.fail({ _tag: "NotFound" }))
      const routes: ReadonlyArray<readonly [string, Route, Record<Role, number>]> = [
        ["GET /services (listed)", listed, { creator: 200, owner: 200, admin: 200, member: 200, outsider: 404 }],
        ["GET /services/{id}", (c, id) => c.services.get({ params: { id } }), { creator: 200, owner: 200, admin: 200, member: 200, outsider: 404 }],
        ["PATCH /services/{id} title", (c, id) => c.services.update({ params: { id }, payload: { title: "Renamed" } }), {
          creator: 200,
          owner: 200,
          admin: 403,
          member: 403,
          outsider: 404
        }],
        ["PATCH /services/{id} reply webhook", (c, id) => c.services.update({ params: { id }, payload: { defaultReplyWebhookId: null } }), {
          creator: 200,
          owner: 403,
          admin: 403,
          member: 403,
          outsider: 404
        }],
        ["DELETE /services/{id}", (c, id) => c.services.remove({ params: { id } }), { creator: 200, owner: 200, admin: 403, member: 403, outsider: 404 }],
        ["POST /services/{id}/rotate", (c, id) => c.services.rotate({ params: { id } }), { creator: 200, owner: 403, admin: 403, member: 403, outsider: 404 }],
        ["POST /services/{id}/share family", (c, id) => c.services.share({ params: { id }, payload: { familyId: teamId } }), {
          creator: 200,
          owner: 403,
          admin: 403,
          member: 403,
          outsider: 404
        }],
        ["POST /services/{id}/share null", (c, id) => c.services.share({ params: { id }, payload: { familyId: null } }), {
          creator: 200,
          owner: 403,
          admin: 403,
          member: 403,
          outsider: 404
        }]
      ]
      const seen: Array<string> = []
      const wanted: Array<string> = []
      for (const [route, call, expected] of routes) {
        for (const role of Object.keys(expected) as ReadonlyArray<Role>) {
          // A fresh shared service per cell: a delete or an unshare must not decide the next cell.
          const { service } = yield* sharedService(agents.creator, teamId)
          seen.push(`${route} as ${role}: ${yield* statusOf(call(agents[role], service.id))}`)
          wanted.push(`${route} as ${role}: ${expected[role]}`)
        }
      }
      assert.deepStrictEqual(seen, wanted)
    }))

  it.effect("a delivery reaches every member's devices; each has an own inbox copy and read state", () =>
    Effect.gen(function*() {
      const { agents, people, teamId } = yield* family
      const creatorPhone = yield* phoneOf(people.creator)
      const memberPhone = yield* phoneOf(people.member)
      const ownerPhone = yield* phoneOf(people.owner)
      const outsiderPhone = yield* phoneOf(people.outsider)
      const { webhookUrl } = yield* sharedService(agents.creator, teamId, "Doorbell")

      const accepted = yield* deliver(webhookUrl, { title: "Ding dong", body: "Someone is at the door" })
      assert.strictEqual(accepted.status, 202)
      const { eventId } = accepted.body as { eventId: string }
      for (const phone of [creatorPhone, memberPhone, ownerPhone]) {
        const [push] = yield* eventually(pushesTo(phone), (items) => items.length === 1)
        assert.deepStrictEqual((push?.payload as { aps: { alert: unknown } }).aps.alert, { title: "Ding dong", body: "Someone is at the door" })
      }
      assert.deepStrictEqual(yield* pushesTo(outsiderPhone), [])

      // Each recipient has their own copy; the member reading theirs leaves the creator's unread.
      const ref = { params: { id: `event:${eventId}` } }
      const memberCopy = yield* agents.member.inbox.get(ref)
      assert.strictEqual(memberCopy.sourceName, "Doorbell")
      assert.isNull(memberCopy.readAt)
      // A member's copy lists only the pushes to the member's own devices.
      assert.deepStrictEqual((memberCopy.pushReceipts ?? []).map((r) => r.deviceId), [memberPhone.device.id])
      yield* agents.member.inbox.read(ref)
      assert.isNotNull((yield* agents.member.inbox.get(ref)).readAt)
      assert.isNull((yield* agents.creator.inbox.get(ref)).readAt)
      assert.isNull((yield* agents.owner.inbox.get(ref)).readAt)
      assert.strictEqual((yield* Effect.flip(agents.outsider.inbox.get(ref)))._tag, "NotFound")

      // GET /events stays the creator's: the event counts every recipient's devices.
      const events = yield* eventually(agents.creator.history.events(), (e) => e.items[0]?.status === "delivered")
      assert.strictEqual(events.items[0]?.id, eventId)
      assert.strictEqual(events.items[0]?.deliveredCount, 3)
      assert.deepStrictEqual((yield* agents.member.history.events()).items, [])
    }))

  it.effect("the family owner renames and deletes but never sees the webhook URL; the family's log has each change", () =>
    Effect.gen(function*() {
      const { agents, people, teamId } = yield* family
      const { service, webhookUrl } = yield* sharedService(agents.creator, teamId, "Garage")
      const token = hookPath(webhookUrl).split("/").pop()!

      const seenByOwner = yield* agents.owner.services.get({ params: { id: service.id } })
      assert.notProperty(seenByOwner, "webhookUrl")
      const listedByOwner = yield* agents.owner.services.list()
      assert.notInclude(JSON.stringify([seenByOwner, listedByOwner]), token)
      assert.strictEqual((yield* Effect.flip(agents.owner.services.rotate({ params: { id: service.id } })))._tag, "Forbidden")

      const renamed = yield* agents.owner.services.update({ params: { id: service.id }, payload: { title: "Garage door" } })
      assert.strictEqual(renamed.title, "Garage door")
      assert.strictEqual((yield* agents.member.services.get({ params: { id: service.id } })).title, "Garage door")
      yield* agents.owner.services.remove({ params: { id: service.id } })
      assert.strictEqual((yield* Effect.flip(agents.creator.services.get({ params: { id: service.id } })))._tag, "NotFound")
      assert.strictEqual((yield* deliver(webhookUrl, { body: "open" })).status, 404)

      const entries = (yield* auditOf(teamId)).filter((e) => e.targetId === service.id)
      assert.deepStrictEqual(entries.map((e) => [e.action, e.actorUserId]), [
        ["service.shared", people.creator.person.id],
        ["service.updated", people.owner.person.id],
        ["service.deleted", people.owner.person.id]
      ])
    }))

  it.effect("unsharing stops deliveries to members and hides the service from them", () =>
    Effect.gen(function*() {
      const { agents, people, teamId } = yield* family
      const creatorPhone = yield* phoneOf(people.creator)
      const memberPhone = yield* phoneOf(people.member)
      const { service, webhookUrl } = yield* sharedService(agents.creator, teamId, "Weather")
      yield* deliver(webhookUrl, { body: "rain at 5" })
      yield* eventually(pushesTo(memberPhone), (items) => items.length === 1)

      const unshared = yield* agents.creator.services.share({ params: { id: service.id }, payload: { familyId: null } })
      assert.isNull(unshared.familyId)
      const second = yield* deliver(webhookUrl, { body: "sun at 6" })
      const { eventId } = second.body as { eventId: string }
      yield* eventually(pushesTo(creatorPhone), (items) => items.length === 2)
      assert.strictEqual((yield* Effect.flip(agents.member.inbox.get({ params: { id: `event:${eventId}` } })))._tag, "NotFound")
      assert.strictEqual((yield* pushesTo(memberPhone)).length, 1)
      assert.strictEqual((yield* Effect.flip(agents.member.services.get({ params: { id: service.id } })))._tag, "NotFound")
      assert.isFalse((yield* agents.member.services.list()).items.some((s) => s.id === service.id))

      // Unsharing again changes nothing and writes nothing.
      yield* agents.creator.services.share({ params: { id: service.id }, payload: { familyId: null } })
      const entries = (yield* auditOf(teamId)).filter((e) => e.targetId === service.id)
      assert.deepStrictEqual(entries.map((e) => e.action), ["service.shared", "service.unshared"])
    }))

  it.effect("sharing with a family one is not in, a workplace team, or no such family: 404", () =>
    Effect.gen(function*() {
      const { agents, people, teamId } = yield* family
      const { service } = yield* agents.creator.services.create({ payload: { title: "Mine" } })
      const elsewhere = yield* seedTeam({ owner: people.outsider, name: "The Joneses" })
      const workplace = yield* seedTeam({ owner: people.owner, kind: "team", members: [{ person: people.creator, role: "member" }] })
      for (const familyId of [elsewhere.teamId, workplace.teamId, "team_0000000000000000000000000z"]) {
        const error = yield* Effect.flip(agents.creator.services.share({ params: { id: service.id }, payload: { familyId } }))
        assert.strictEqual(error._tag, "NotFound", familyId)
      }
      assert.isNull((yield* agents.creator.services.get({ params: { id: service.id } })).familyId)
      // Moving a shared service to another family the creator is in: unshared from one, shared with the other.
      const second = yield* seedTeam({ owner: people.admin, members: [{ person: people.creator, role: "member" }] })
      yield* agents.creator.services.share({ params: { id: service.id }, payload: { familyId: teamId } })
      const moved = yield* agents.creator.services.share({ params: { id: service.id }, payload: { familyId: second.teamId } })
      assert.strictEqual(moved.familyId, second.teamId)
      assert.strictEqual((yield* Effect.flip(agents.member.services.get({ params: { id: service.id } })))._tag, "NotFound")
      assert.deepStrictEqual((yield* auditOf(teamId)).map((e) => e.action), ["service.shared", "service.unshared"])
      assert.deepStrictEqual((yield* auditOf(second.teamId)).map((e) => e.action), ["service.shared"])
    }))

  it.effect("a creator leaving the family unshares their services (logged); other members' stay shared", () =>
    Effect.gen(function*() {
      const { agents, people, teamId } = yield* family
      const memberPhone = yield* phoneOf(people.member)
      const { service, webhookUrl } = yield* sharedService(agents.creator, teamId, "Leaving")
      const { service: others } = yield* sharedService(agents.member, teamId, "Staying")

      yield* agents.creator.teams.leave({ params: { id: teamId } })
      assert.isNull((yield* agents.creator.services.get({ params: { id: service.id } })).familyId)
      assert.strictEqual((yield* agents.member.services.get({ params: { id: others.id } })).familyId, teamId)
      assert.strictEqual((yield* Effect.flip(agents.member.services.get({ params: { id: service.id } })))._tag, "NotFound")
      const { eventId } = (yield* deliver(webhookUrl, { body: "after leaving" })).body as { eventId: string }
      assert.strictEqual((yield* Effect.flip(agents.member.inbox.get({ params: { id: `event:${eventId}` } })))._tag, "NotFound")
      assert.deepStrictEqual(yield* pushesTo(memberPhone), [])
      const entries = (yield* auditOf(teamId)).filter((e) => e.targetId === service.id)
      assert.deepStrictEqual(entries.map((e) => e.action), ["service.shared", "service.unshared"])
    }))

  it.effect("a creator removed from the family, or the family deleted, unshares too", () =>
    Effect.gen(function*() {
      const { agents, people, teamId } = yield* family
      const { service } = yield* sharedService(agents.creator, teamId, "Removed")
      const { service: others } = yield* sharedService(agents.member, teamId, "Deleted")
      yield* agents.owner.teams.removeMember({ params: { id: teamId, userId: people.creator.person.id } })
      assert.isNull((yield* agents.creator.services.get({ params: { id: service.id } })).familyId)
      assert.strictEqual((yield* Effect.flip(agents.owner.services.get({ params: { id: service.id } })))._tag, "NotFound")

      yield* agents.owner.teams.remove({ params: { id: teamId } })
      assert.isNull((yield* agents.member.services.get({ params: { id: others.id } })).familyId)
      assert.strictEqual((yield* Effect.flip(agents.owner.services.get({ params: { id: others.id } })))._tag, "NotFound")
    }))

  it.effect("a share racing the creator's leave never leaves the service shared with a family the creator left", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      for (let round = 0; round < 5; round++) {
        const { agents, teamId } = yield* family
        const { service } = yield* agents.creator.services.create({ payload: { title: `Race ${round}` } })
        const [shared, left] = yield* Effect.all([
          Effect.result(agents.creator.services.share({ params: { id: service.id }, payload: { familyId: teamId } })),
          Effect.result(agents.creator.teams.leave({ params: { id: teamId } }))
        ], { concurrency: "unbounded" })
        assert.strictEqual(left._tag, "Success")
        // Either the share came first (and the leave unshared it) or the leave did (and the share is 404).
        if (shared._tag === "Failure") assert.strictEqual(shared.failure._tag, "NotFound")
        const [row] = yield* sql<{ familyId: string | null }>`SELECT family_id FROM services WHERE id = ${service.id}`
        assert.isNull(row?.familyId)
      }
    }))
})
