/**
 * Escalation through the page's actor and its persisted step timers, on the
 * real cluster: a step runs when its stored timer comes due (moved to now in
 * the message table: "time passes" without sleeping for minutes), `next`
 * pages the following rotation member, `group` pages everyone, acknowledge
 * stops later steps, escalate runs the next step at once (its timer then finds
 * it done), and resolve removes the alert from every device still showing it.
 */
import { assert, layer } from "@effect/vitest"
import { Duration, Effect } from "effect"
import { TestClock } from "effect/testing"
import { SqlClient } from "effect/sql"
import { Pages } from "../../src/oncall/Pages.ts"
import { PageSteps } from "../../src/oncall/PageSteps.ts"
import { eventually } from "../../../../test/support/eventually.ts"
import { personClient, TestServerLayer } from "../../../../test/support/server.ts"
import { agentOf, seedRoles } from "../../../../test/support/teams.ts"
import { alertsOf, deliveries, phoneOf, seedGroup, stepComesDue, stepTimers, withdrawalsOf } from "./pagesSupport.ts"

const notifiedOf = (page: { readonly notified: ReadonlyArray<{ readonly userId: string; readonly step: number }> }) =>
  page.notified.map((n) => `${n.step}:${n.userId}`).sort()

/** Waits until the step's stored timer was processed by the actor. */
const processed = (pageId: string, step: number) =>
  eventually(stepTimers(pageId), (t) => t.get(`step-${step}`)?.processed === true)

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("escalation", (it) => {
  it.effect("step 0 pages the on-call person; `next` after its minutes; `group` pages all; each person once per step", () =>
    Effect.gen(function*() {
      const { admin, member, owner, teamId } = yield* seedRoles()
      const groupId = yield* seedGroup(teamId, [member, admin, owner], [{ afterMinutes: 5, target: "next" }, { afterMinutes: 10, target: "group" }])
      const phones = { member: yield* phoneOf(member), admin: yield* phoneOf(admin), owner: yield* phoneOf(owner) }
      const agent = yield* agentOf(owner, ["oncall:write", "oncall:read"])
      const { page } = yield* agent.pages.create({ params: { groupId }, payload: { title: "API down" } })
      assert.deepStrictEqual(notifiedOf(page), [`0:${member.person.id}`])

      // Five minutes on: the `next` person (after the one on duty) is paged, nobody else.
      yield* stepComesDue(page.id, 1)
      const afterNext = yield* eventually(agent.pages.get({ params: { id: page.id } }), (p) => p.step === 1)
      assert.deepStrictEqual(notifiedOf(afterNext), [`0:${member.person.id}`, `1:${admin.person.id}`].sort())
      yield* eventually(Effect.map(deliveries(admin, phones.admin), (d) => alertsOf(d, page.id)), (a) => a.length === 1)
      assert.lengthOf(alertsOf(yield* deliveries(owner, phones.owner), page.id), 0)

      // Ten minutes on: the whole group.
      yield* stepComesDue(page.id, 2)
      const afterGroup = yield* eventually(agent.pages.get({ params: { id: page.id } }), (p) => p.step === 2)
      assert.deepStrictEqual(notifiedOf(afterGroup), [
        `0:${member.person.id}`, `1:${admin.person.id}`,
        `2:${member.person.id}`, `2:${admin.person.id}`, `2:${owner.person.id}`
      ].sort())
      for (const [who, phone, count] of [[member, phones.member, 2], [admin, phones.admin, 2], [owner, phones.owner, 1]] as const) {
        yield* eventually(Effect.map(deliveries(who, phone), (d) => alertsOf(d, page.id)), (a) => a.length === count)
      }

      // Step 2 run again (as if its counter had not moved): its people are already marked, nobody is paged twice.
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE pages SET step = 1 WHERE id = ${page.id}`
      yield* (yield* PageSteps).due(page.id, 2)
      assert.strictEqual((yield* agent.pages.get({ params: { id: page.id } })).step, 2)
      const rows = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM push_receipts WHERE item_id = ${page.id} AND purpose = 'alert'`
      assert.strictEqual(rows[0]!.n, 5)
    }))

  it.effect("acknowledge stops the escalation", () =>
    Effect.gen(function*() {
      const { admin, member, owner, teamId } = yield* seedRoles()
      const groupId = yield* seedGroup(teamId, [member, admin], [{ afterMinutes: 5, target: "next" }])
      const adminPhone = yield* phoneOf(admin)
      const agent = yield* agentOf(owner, ["oncall:write", "oncall:read"])
      const { page } = yield* agent.pages.create({ params: { groupId }, payload: { title: "Queue backed up" } })

      const app = yield* personClient(member.session)
      const acked = yield* app.pages.acknowledge({ params: { id: page.id } })
      assert.strictEqual(acked.status, "acknowledged")
      assert.strictEqual(acked.acknowledgedBy, member.person.id)
      assert.isNotNull(acked.acknowledgedAt)
      // Again: unchanged.
      assert.strictEqual((yield* app.pages.acknowledge({ params: { id: page.id } })).acknowledgedAt, acked.acknowledgedAt)

      yield* stepComesDue(page.id, 1)
      yield* processed(page.id, 1)
      const after = yield* agent.pages.get({ params: { id: page.id } })
      assert.strictEqual(after.step, 0)
      assert.deepStrictEqual(notifiedOf(after), [`0:${member.person.id}`])
      assert.lengthOf(alertsOf(yield* deliveries(admin, adminPhone), page.id), 0)
      const escalated = yield* Effect.flip(app.pages.escalate({ params: { id: page.id } }))
      assert.strictEqual(escalated._tag, "Conflict")
    }))

  it.effect("escalate runs the next step at once; its timer later finds it done", () =>
    Effect.gen(function*() {
      const { admin, member, owner, teamId } = yield* seedRoles()
      const groupId = yield* seedGroup(teamId, [member, admin], [{ afterMinutes: 30, target: "next" }])
      const adminPhone = yield* phoneOf(admin)
      const agent = yield* agentOf(owner, ["oncall:write", "oncall:read"])
      const { page } = yield* agent.pages.create({ params: { groupId }, payload: { title: "Latency" } })

      const app = yield* personClient(member.session)
      const escalated = yield* app.pages.escalate({ params: { id: page.id } })
      assert.strictEqual(escalated.step, 1)
      assert.strictEqual(escalated.status, "triggered")
      assert.deepStrictEqual(notifiedOf(escalated), [`0:${member.person.id}`, `1:${admin.person.id}`].sort())
      yield* eventually(Effect.map(deliveries(admin, adminPhone), (d) => alertsOf(d, page.id)), (a) => a.length === 1)

      // Its timer comes due: already run, nothing more.
      yield* stepComesDue(page.id, 1)
      yield* processed(page.id, 1)
      assert.lengthOf(alertsOf(yield* deliveries(admin, adminPhone), page.id), 1)
      // No step left.
      assert.strictEqual((yield* Effect.flip(app.pages.escalate({ params: { id: page.id } })))._tag, "Conflict")
    }))

  it.effect("resolve clears the page from every device showing it and stops the timers", () =>
    Effect.gen(function*() {
      const { admin, member, owner, teamId } = yield* seedRoles()
      const groupId = yield* seedGroup(teamId, [member, admin, owner], [{ afterMinutes: 1, target: "group" }, { afterMinutes: 2, target: "group" }])
      const phones = { member: yield* phoneOf(member), admin: yield* phoneOf(admin), owner: yield* phoneOf(owner) }
      const agent = yield* agentOf(owner, ["oncall:write", "oncall:read"])
      const { page } = yield* agent.pages.create({ params: { groupId }, payload: { title: "Pager test" } })
      yield* stepComesDue(page.id, 1)
      yield* eventually(agent.pages.get({ params: { id: page.id } }), (p) => p.step === 1)
      for (const [who, phone] of [[member, phones.member], [admin, phones.admin], [owner, phones.owner]] as const) {
        yield* eventually(Effect.map(deliveries(who, phone), (d) => alertsOf(d, page.id)), (a) => a.length >= 1)
      }

      const resolved = yield* agent.pages.resolve({ params: { id: page.id } })
      assert.strictEqual(resolved.status, "resolved")
      assert.strictEqual(resolved.resolvedBy, owner.person.id)
      for (const [who, phone] of [[member, phones.member], [admin, phones.admin], [owner, phones.owner]] as const) {
        const removal = yield* eventually(Effect.map(deliveries(who, phone), (d) => withdrawalsOf(d, page.id)), (w) => w.length === 1)
        assert.strictEqual(removal[0]!.priority, 5)
      }
      // Resolving again answers it unchanged; a later step's timer runs nothing.
      assert.strictEqual((yield* agent.pages.resolve({ params: { id: page.id } })).resolvedAt, resolved.resolvedAt)
      yield* stepComesDue(page.id, 2)
      yield* processed(page.id, 2)
      const after = yield* agent.pages.get({ params: { id: page.id } })
      assert.strictEqual(after.step, 1)
      assert.strictEqual(after.notified.length, 4)
      const sql = yield* SqlClient.SqlClient
      const feed = yield* sql<{ result: string | null }>`SELECT result FROM activity_feed WHERE ref_id = ${page.id}`
      assert.deepStrictEqual(feed.map((f) => f.result), ["resolved", "resolved", "resolved"])
      const audit = yield* sql<{ action: string }>`SELECT action FROM team_audit WHERE target_id = ${page.id} ORDER BY created_at, id`
      assert.deepStrictEqual(audit.map((a) => a.action), ["page.created", "page.escalated", "page.resolved"])
      const app = yield* personClient(member.session)
      assert.strictEqual((yield* Effect.flip(app.pages.acknowledge({ params: { id: page.id } })))._tag, "Conflict")
    }))
})

/**
 * On a controllable clock (TestClock), calling the service directly: the page's
 * time and its step timers are the service clock's, and a `next` step pages
 * whoever follows the person on duty when the step runs — here a hand-off
 * falls between the page and its step. The clock is set months ahead, so the
 * server's own runner (on the real clock) leaves these timers alone.
 */
layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("escalation on a controllable clock", (it) => {
  it.effect("step times follow the service clock; `next` is taken when the step runs", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const { admin, member, owner, teamId } = yield* seedRoles()
      // Daily at 10:00 UTC from 2027-06-01 10:00: member until 06-02 10:00, then admin, then owner.
      const groupId = yield* seedGroup(teamId, [member, admin, owner], [{ afterMinutes: 60, target: "next" }], {
        period: "daily",
        handoffAt: "10:00",
        startsAt: "2027-06-01T10:00:00.000Z"
      })
      const createdAt = Date.parse("2027-06-02T09:30:00.000Z")
      yield* TestClock.setTime(createdAt)
      const pages = yield* Pages
      const steps = yield* PageSteps
      const actor = { userId: owner.person.id, tokenId: null, ip: null, userAgent: null }
      const created = yield* pages.create({ userId: owner.person.id, tokenId: "tok_clock" }, actor, groupId, { title: "Clock" }, undefined)
      const id = created.page.id
      assert.strictEqual(created.page.createdAt, "2027-06-02T09:30:00.000Z")
      assert.deepStrictEqual(notifiedOf(created.page), [`0:${member.person.id}`])
      assert.strictEqual((yield* stepTimers(id)).get("step-1")?.due, createdAt + 60 * 60_000)

      // An hour on, the step runs — after the 10:00 hand-off, so `next` follows the admin on duty: the owner.
      yield* TestClock.adjust(Duration.minutes(60))
      yield* steps.due(id, 1)
      const after = yield* pages.get(owner.person.id, id)
      assert.deepStrictEqual(notifiedOf(after), [`0:${member.person.id}`, `1:${owner.person.id}`].sort())
      assert.strictEqual(after.notified.find((n) => n.step === 1)?.at, "2027-06-02T10:30:00.000Z")
      yield* sql`DELETE FROM cluster_messages WHERE entity_type = 'Page' AND entity_id = ${id}`
    }).pipe(Effect.provide(TestClock.layer())))
})
