/**
 * Pages over HTTP with the typed clients: creating a page pages the person on
 * call (only them) with a time-sensitive alert, files it in their inbox and
 * feed, writes the audit entry and stores one durable timer per escalation
 * step; reading, listing (newest first, by status, with a cursor), the open
 * pages of a person, and paging through POST /notifications with `oncall`.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { Pages } from "../../src/oncall/Pages.ts"
import { eventually } from "../../../../test/support/eventually.ts"
import { TestServerLayer } from "../../../../test/support/server.ts"
import { agentOf, seedRoles } from "../../../../test/support/teams.ts"
import { alertsOf, deliveries, phoneOf, seedGroup, stepTimers } from "./pagesSupport.ts"

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("pages", (it) => {
  it.effect("a page pages the on-call person only, time-sensitive, and stores one timer per step", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const { admin, member, owner, teamId } = yield* seedRoles()
      const groupId = yield* seedGroup(teamId, [member, admin, owner], [{ afterMinutes: 5, target: "next" }, { afterMinutes: 15, target: "group" }])
      const [memberPhone, adminPhone] = [yield* phoneOf(member), yield* phoneOf(admin)]
      const agent = yield* agentOf(owner, ["oncall:write", "oncall:read"])

      const created = yield* agent.pages.create({ params: { groupId }, payload: { title: "Disk full", body: "db-1 at 99%" } })
      assert.isFalse(created.deduplicated)
      const page = created.page
      assert.match(page.id, /^page_/)
      assert.strictEqual(page.status, "triggered")
      assert.strictEqual(page.groupId, groupId)
      assert.strictEqual(page.groupName, "Primary")
      assert.strictEqual(page.teamId, teamId)
      assert.strictEqual(page.repeatCount, 0)
      assert.strictEqual(page.step, 0)
      assert.deepStrictEqual(page.notified.map((n) => [n.userId, n.name, n.step]), [[member.person.id, "member", 0]])

      const alerts = yield* eventually(Effect.map(deliveries(member, memberPhone), (d) => alertsOf(d, page.id)), (a) => a.length === 1)
      const aps = (alerts[0]!.payload as { aps: Record<string, unknown> }).aps
      assert.strictEqual(aps["interruption-level"], "time-sensitive")
      assert.strictEqual(alerts[0]!.priority, 10)
      assert.lengthOf(alertsOf(yield* deliveries(admin, adminPhone), page.id), 0, "the next person is not paged yet")

      // One persisted timer per step, due `afterMinutes` after creation.
      const timers = yield* stepTimers(page.id)
      const createdAt = Date.parse(page.createdAt)
      assert.strictEqual(timers.get("step-1")?.due, createdAt + 5 * 60_000)
      assert.strictEqual(timers.get("step-2")?.due, createdAt + 15 * 60_000)

      // The inbox and the feed of the paged person; the audit entry.
      const items = yield* sql<{ origin: string; title: string }>`SELECT origin, title FROM inbox_items WHERE user_id = ${member.person.id} AND item_id = ${page.id}`
      assert.deepStrictEqual(items.map((i) => [i.origin, i.title]), [["page", "Disk full"]])
      const feed = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM activity_feed WHERE user_id = ${member.person.id} AND ref_id = ${page.id}`
      assert.strictEqual(feed[0]!.n, 1)
      const audit = yield* sql<{ action: string; actorUserId: string }>`SELECT action, actor_user_id FROM team_audit WHERE target_id = ${page.id}`
      assert.deepStrictEqual(audit.map((a) => [a.action, a.actorUserId]), [["page.created", owner.person.id]])

      // Read back, and the person's open pages.
      const read = yield* agent.pages.get({ params: { id: page.id } })
      assert.strictEqual(read.id, page.id)
      const pages = yield* Pages
      assert.deepStrictEqual((yield* pages.openFor(member.person.id)).map((p) => p.id), [page.id])
      assert.lengthOf(yield* pages.openFor(admin.person.id), 0)
    }))

  it.effect("a team's pages: newest first, by status, with a cursor; in the paged person's inbox", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const { admin, member, owner, teamId } = yield* seedRoles()
      const groupId = yield* seedGroup(teamId, [member, admin])
      const agent = yield* agentOf(owner, ["oncall:write", "oncall:read"])
      const ids: Array<string> = []
      for (const title of ["one", "two", "three"]) {
        ids.push((yield* agent.pages.create({ params: { groupId }, payload: { title } })).page.id)
      }
      yield* agent.pages.resolve({ params: { id: ids[0]! } })

      const first = yield* agent.pages.list({ params: { id: teamId }, query: { limit: 2 } })
      assert.deepStrictEqual(first.items.map((p) => p.title), ["three", "two"])
      assert.isNotNull(first.nextCursor)
      const rest = yield* agent.pages.list({ params: { id: teamId }, query: { limit: 2, cursor: first.nextCursor! } })
      assert.deepStrictEqual(rest.items.map((p) => p.title), ["one"])
      assert.isNull(rest.nextCursor)
      const resolved = yield* agent.pages.list({ params: { id: teamId }, query: { status: "resolved" } })
      assert.deepStrictEqual(resolved.items.map((p) => p.id), [ids[0]])
      const bad = yield* Effect.flip(agent.pages.list({ params: { id: teamId }, query: { cursor: "not-a-cursor" } }))
      assert.strictEqual(bad._tag, "BadRequest")

      // The paged person's inbox lists the page, with its status.
      const reader = yield* agentOf(member, ["inbox:read"])
      const inbox = yield* reader.inbox.list()
      assert.includeMembers(inbox.items.filter((i) => i.origin === "page").map((i) => i.id), ids.map((id) => `page:${id}`))
      const detail = yield* reader.inbox.get({ params: { id: `page:${ids[0]!}` } })
      assert.strictEqual(detail.status, "resolved")

      // A deleted group leaves its pages readable, under the group's name.
      yield* sql`DELETE FROM oncall_groups WHERE id = ${groupId}`
      const orphan = yield* agent.pages.get({ params: { id: ids[1]! } })
      assert.isNull(orphan.groupId)
      assert.strictEqual(orphan.groupName, "Primary")
    }))
})
