/**
 * Package review over HTTP: every review-state transition from every state
 * (as one table, the refused ones included), what a transition answers,
 * reports (bounds, count, limit), the review list and the export download.
 * Packages are published through POST /mini-apps/publish (reviewSupport.ts).
 */
import { assert, layer } from "@effect/vitest"
import { MINI_APP_MAX_REPORTS } from "@herald/api"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { makeAgent, TestServerLayer } from "../../../../test/support/server.ts"
import { act, call, seedPackage, stateOf } from "./reviewSupport.ts"
import type { Action, State } from "./reviewSupport.ts"

const rw = ["apps:read", "apps:write"] as const

/** A fresh package of the agent's person. */
const publish = (agent: { secret: string; person: { id: string } }) => seedPackage(agent)

/** How to reach each state from `personal-only`. */
const reach: Record<State, ReadonlyArray<Action>> = {
  "personal-only": [],
  blocked: ["block"],
  disabled: ["disable"],
  removed: ["remove"]
}

/** from × action → the answer's status and the state after (the table in MiniAppReview.ts). */
const transitions: ReadonlyArray<readonly [State, Action, number, State]> = [
  ["personal-only", "block", 200, "blocked"],
  ["personal-only", "disable", 200, "disabled"],
  ["personal-only", "remove", 200, "removed"],
  ["disabled", "block", 200, "blocked"],
  ["disabled", "disable", 200, "disabled"],
  ["disabled", "remove", 200, "removed"],
  ["blocked", "block", 200, "blocked"],
  ["blocked", "disable", 409, "blocked"],
  ["blocked", "remove", 200, "removed"],
  ["removed", "block", 409, "removed"],
  ["removed", "disable", 409, "removed"],
  ["removed", "remove", 409, "removed"]
]

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("mini-app review", (it) => {
  it.effect("every transition from every state: the new state and the package, or 409", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...rw])
      const failures: Array<string> = []
      for (const [from, action, status, after] of transitions) {
        const id = yield* publish(agent)
        for (const step of reach[from]) { const r = yield* act(agent.secret, id, step); assert.strictEqual(r.status, 200, JSON.stringify(r.body)) }
        const answer = yield* act(agent.secret, id, action)
        const label = `${action} from ${from}`
        if (answer.status !== status) failures.push(`${label}: ${answer.status}, expected ${status}`)
        if (status === 200) {
          if (answer.body.packageId !== id) failures.push(`${label}: answered ${answer.body.packageId}`)
          if (answer.body.reviewState !== after) failures.push(`${label}: answered state ${answer.body.reviewState}`)
          if (typeof answer.body.signature !== "string" || answer.body.manifest?.appId !== "demo-app") {
            failures.push(`${label}: not a package record`)
          }
        } else if (answer.body.code !== "CONFLICT") failures.push(`${label}: code ${answer.body.code}`)
        const stored = yield* stateOf(id)
        if (stored !== after) failures.push(`${label}: stored ${stored}, expected ${after}`)
      }
      assert.deepStrictEqual(failures, [])
    }))

  it.effect("a removed package is gone from the catalog but stays in review; blocked and disabled are not listed", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...rw])
      const kept = yield* publish(agent)
      const blocked = yield* publish(agent)
      const removed = yield* publish(agent)
      yield* act(agent.secret, blocked, "block")
      yield* act(agent.secret, removed, "remove")
      const listed = yield* agent.client.miniApps.list()
      assert.deepStrictEqual(listed.items.map((p) => p.packageId), [kept])
      assert.strictEqual((yield* call(agent.secret, "GET", `/mini-apps/${removed}`)).status, 404)
      assert.strictEqual((yield* call(agent.secret, "GET", `/mini-apps/${blocked}`)).body.reviewState, "blocked")
      const review = yield* agent.client.miniAppReview.review()
      assert.deepStrictEqual(
        review.items.map((e) => [e.packageId, e.reviewState]),
        [[removed, "removed"], [blocked, "blocked"], [kept, "personal-only"]]
      )
    }))

  it.effect("concurrent transitions apply one by one: of remove and disable, a disable after the remove is refused", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...rw])
      const id = yield* publish(agent)
      const answers = yield* Effect.all([act(agent.secret, id, "remove"), act(agent.secret, id, "disable")], { concurrency: 2 })
      const [removal, disabling] = answers
      assert.strictEqual(removal.status, 200)
      assert.include([200, 409], disabling.status)
      // Whatever the order, the package ends removed (removal is final, and a disable never undoes it).
      assert.strictEqual(yield* stateOf(id), "removed")
    }))

  it.effect("report: 201 with the report, counted in review; bounded fields; removed 409; at most the limit", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...rw])
      const id = yield* publish(agent)
      const first = yield* call(agent.secret, "POST", `/mini-apps/${id}/report`, { reason: "r".repeat(200), detail: "d".repeat(2000) })
      assert.strictEqual(first.status, 201)
      assert.match(first.body.id, /^mrep_/)
      assert.strictEqual(first.body.packageId, id)
      assert.strictEqual(first.body.detail, "d".repeat(2000))
      const typed = yield* agent.client.miniAppReview.report({ params: { packageId: id }, payload: { reason: "spam" } })
      assert.strictEqual(typed.detail, null)
      const refused: ReadonlyArray<unknown> = [
        { reason: "r".repeat(201) },
        { reason: "" },
        { reason: "x", detail: "d".repeat(2001) },
        { reason: "x", detail: "" },
        { detail: "no reason" },
        { reason: "x", extra: true }
      ]
      for (const body of refused) {
        const answer = yield* call(agent.secret, "POST", `/mini-apps/${id}/report`, body)
        assert.strictEqual(answer.status, 400, JSON.stringify(body))
        assert.strictEqual(answer.body.code, "VALIDATION_FAILED")
      }
      const review = yield* agent.client.miniAppReview.review()
      assert.strictEqual(review.items.find((e) => e.packageId === id)?.reportCount, 2)

      // A blocked package may still be reported; the limit holds.
      yield* act(agent.secret, id, "block")
      const sql = yield* SqlClient.SqlClient
      yield* sql`INSERT INTO mini_app_reports (id, package_id, user_id, reason)
                 SELECT 'mrep_fill' || g, ${id}, ${agent.person.id}, 'filler' FROM generate_series(1, ${MINI_APP_MAX_REPORTS - 3}) g`
      assert.strictEqual((yield* call(agent.secret, "POST", `/mini-apps/${id}/report`, { reason: "last" })).status, 201)
      const over = yield* call(agent.secret, "POST", `/mini-apps/${id}/report`, { reason: "one more" })
      assert.strictEqual(over.status, 422)
      assert.strictEqual(over.body.limit, MINI_APP_MAX_REPORTS)

      const gone = yield* publish(agent)
      yield* act(agent.secret, gone, "remove")
      assert.strictEqual((yield* call(agent.secret, "POST", `/mini-apps/${gone}/report`, { reason: "x" })).status, 409)
    }))

  it.effect("export: an attachment of every package's metadata with its reports, any state", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...rw])
      const kept = yield* publish(agent)
      const removed = yield* publish(agent)
      yield* call(agent.secret, "POST", `/mini-apps/${kept}/report`, { reason: "broken", detail: "the button does nothing" })
      yield* act(agent.secret, removed, "remove")
      const other = yield* makeAgent([...rw])
      yield* publish(other)

      const answer = yield* call(agent.secret, "GET", "/mini-apps/export")
      assert.strictEqual(answer.status, 200)
      assert.strictEqual(answer.headers.get("content-disposition"), "attachment; filename=\"mini-apps-export.json\"")
      assert.match(answer.headers.get("content-type") ?? "", /^application\/json/)
      const body = answer.body
      assert.strictEqual(body.userId, agent.person.id)
      assert.isString(body.exportedAt)
      assert.deepStrictEqual(body.packages.map((e: any) => [e.package.packageId, e.package.reviewState]), [
        [removed, "removed"],
        [kept, "personal-only"]
      ])
      const keptEntry = body.packages[1]
      const record = yield* agent.client.miniApps.get({ params: { packageId: kept } })
      assert.deepStrictEqual(keptEntry.package.archiveSha256, record.archiveSha256)
      assert.deepStrictEqual(keptEntry.package.signature, record.signature)
      assert.deepStrictEqual(keptEntry.package.manifest, JSON.parse(JSON.stringify(record.manifest)))
      assert.strictEqual(keptEntry.reportCount, 1)
      assert.strictEqual(keptEntry.lastOfferedAt, null)
      assert.deepStrictEqual(keptEntry.reports.map((r: any) => [r.reason, r.detail]), [["broken", "the button does nothing"]])
      assert.deepStrictEqual(body.packages[0].reports, [])
      // The typed client reads the same record.
      const typed = yield* agent.client.miniAppReview.export()
      assert.strictEqual(typed.packages.length, 2)
    }))
})
