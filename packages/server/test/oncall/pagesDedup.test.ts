/**
 * Dedup of pages: an open page with the same dedup key (body `dedupKey`, or
 * the `Idempotency-Key` header) absorbs a new one — 200, `repeatCount` + 1,
 * nothing pushed — also when the pages arrive at once (exactly one page); a
 * resolved page frees its key. POST /notifications with `oncall` pages too.
 */
import { assert, layer } from "@effect/vitest"
import { isPage, pageOf } from "@herald/client"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { eventually } from "../../../../test/support/eventually.ts"
import { TestServerLayer } from "../../../../test/support/server.ts"
import { agentOf, seedRoles } from "../../../../test/support/teams.ts"
import { alertsOf, deliveries, phoneOf, seedGroup } from "./pagesSupport.ts"

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("page dedup", (it) => {
  it.effect("concurrent pages with one dedup key make exactly one page; repeatCount counts the others", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const { admin, member, owner, teamId } = yield* seedRoles()
      const groupId = yield* seedGroup(teamId, [member, admin])
      const phone = yield* phoneOf(member)
      const agent = yield* agentOf(owner, ["oncall:write", "oncall:read"])

      const answers = yield* Effect.forEach(Array.from({ length: 12 }, (_, i) => i), (i) =>
        agent.pages.create({ params: { groupId }, payload: { title: `Disk full ${i}`, dedupKey: "disk-full" } }),
        { concurrency: "unbounded" })
      const ids = new Set(answers.map((a) => a.page.id))
      assert.strictEqual(ids.size, 1, "one page")
      assert.strictEqual(answers.filter((a) => !a.deduplicated).length, 1, "one created")
      const [id] = [...ids]
      const rows = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM pages WHERE group_id = ${groupId}`
      assert.strictEqual(rows[0]!.n, 1)
      const page = yield* agent.pages.get({ params: { id: id! } })
      assert.strictEqual(page.repeatCount, 11)
      assert.strictEqual(page.dedupKey, "disk-full")
      yield* eventually(Effect.map(deliveries(member, phone), (d) => alertsOf(d, id!)), (a) => a.length === 1)
      const receipts = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM push_receipts WHERE item_id = ${id!}`
      assert.strictEqual(receipts[0]!.n, 1, "nothing pushed for the absorbed pages")

      // Resolved, the key is free: the next page is a new one.
      yield* agent.pages.resolve({ params: { id: id! } })
      const again = yield* agent.pages.create({ params: { groupId }, payload: { title: "Disk full again", dedupKey: "disk-full" } })
      assert.isFalse(again.deduplicated)
      assert.notStrictEqual(again.page.id, id)
    }))

  it.effect("the Idempotency-Key is the dedup key, across POST /notifications with `oncall` and page creation", () =>
    Effect.gen(function*() {
      const { admin, member, owner, teamId } = yield* seedRoles()
      const groupId = yield* seedGroup(teamId, [member, admin])
      const agent = yield* agentOf(owner, ["oncall:write", "oncall:read", "notifications:send"])

      const first = yield* agent.notifications.create({
        headers: { "idempotency-key": "incident-42" },
        payload: { title: "Checkout errors", body: "5xx above 2%", oncall: groupId }
      })
      assert.isTrue(isPage(first) && first.deduplicated === false)
      const firstPage = pageOf(first).page
      assert.strictEqual(firstPage.dedupKey, "incident-42")
      assert.strictEqual(firstPage.body, "5xx above 2%")

      // Same key on the page route (another route: no replay): absorbed by the open page.
      const second = yield* agent.pages.create({ params: { groupId }, headers: { "idempotency-key": "incident-42" }, payload: { title: "Checkout errors" } })
      assert.isTrue(second.deduplicated)
      assert.strictEqual(second.page.id, firstPage.id)
      assert.strictEqual(second.page.repeatCount, 1)

      // The same request again on the page route: the first answer replayed.
      const replay = yield* agent.pages.create({ params: { groupId }, headers: { "idempotency-key": "incident-42" }, payload: { title: "Checkout errors" } })
      assert.isTrue("idempotent" in replay && replay.idempotent)
      assert.strictEqual((yield* agent.pages.get({ params: { id: firstPage.id } })).repeatCount, 1)
    }))

  it.effect("POST /notifications with `oncall` needs oncall:write and membership of the group's team", () =>
    Effect.gen(function*() {
      const { member, outsider, owner, teamId } = yield* seedRoles()
      const groupId = yield* seedGroup(teamId, [member])
      const sendOnly = yield* agentOf(owner, ["notifications:send"])
      const refused = yield* Effect.flip(sendOnly.notifications.create({ payload: { title: "t", body: "b", oncall: groupId } }))
      assert.strictEqual(refused._tag, "MissingScope")
      const stranger = yield* agentOf(outsider, ["notifications:send", "oncall:write"])
      const hidden = yield* Effect.flip(stranger.notifications.create({ payload: { title: "t", body: "b", oncall: groupId } }))
      assert.strictEqual(hidden._tag, "NotFound")
    }))
})
