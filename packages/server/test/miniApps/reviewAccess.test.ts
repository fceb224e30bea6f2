/**
 * Who may review a package, as one table walked by one test: every review
 * route for the package's owner, another account, and the owner naming an
 * unknown id. Another account's package is concealed (404, as if it did not
 * exist), and its review list and export never show it. Each row acts on a
 * fresh package, so one row's change never decides another's answer.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { makeAgent, TestServerLayer } from "../../../../test/support/server.ts"
import { call, seedPackage } from "./reviewSupport.ts"

type Who = "owner" | "other" | "unknown"

interface Row {
  readonly route: string
  readonly method: "GET" | "POST" | "DELETE"
  readonly path: (packageId: string) => string
  readonly body?: unknown
  readonly expect: Record<Who, number>
}

const perPackage = (ok: number): Record<Who, number> => ({ owner: ok, other: 404, unknown: 404 })

const table: ReadonlyArray<Row> = [
  { route: "GET /mini-apps/review", method: "GET", path: () => "/mini-apps/review", expect: { owner: 200, other: 200, unknown: 200 } },
  { route: "GET /mini-apps/export", method: "GET", path: () => "/mini-apps/export", expect: { owner: 200, other: 200, unknown: 200 } },
  { route: "POST /mini-apps/{id}/offer", method: "POST", path: (id) => `/mini-apps/${id}/offer`, expect: perPackage(200) },
  { route: "POST /mini-apps/{id}/report", method: "POST", path: (id) => `/mini-apps/${id}/report`, body: { reason: "spam" }, expect: perPackage(201) },
  { route: "POST /mini-apps/{id}/block", method: "POST", path: (id) => `/mini-apps/${id}/block`, expect: perPackage(200) },
  { route: "POST /mini-apps/{id}/disable", method: "POST", path: (id) => `/mini-apps/${id}/disable`, expect: perPackage(200) },
  { route: "DELETE /mini-apps/{id}", method: "DELETE", path: (id) => `/mini-apps/${id}`, expect: perPackage(200) }
]

const rw = ["apps:read", "apps:write"] as const

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("mini-app review access", (it) => {
  it.effect("routes × callers: the owner may act on their package; another account and unknown ids get 404", () =>
    Effect.gen(function*() {
      const owner = yield* makeAgent([...rw])
      const other = yield* makeAgent([...rw])
      const failures: Array<string> = []
      for (const row of table) {
        for (const who of ["owner", "other", "unknown"] as const) {
          const id = yield* seedPackage(owner)
          const target = who === "unknown" ? "pkg_00000000000000000000000000" : id
          const answer = yield* call(who === "other" ? other.secret : owner.secret, row.method, row.path(target), row.body)
          if (answer.status !== row.expect[who]) failures.push(`${row.route} as ${who}: ${answer.status}, expected ${row.expect[who]}`)
          if (answer.status === 404 && answer.body.code !== "NOT_FOUND") failures.push(`${row.route} as ${who}: code ${answer.body.code}`)
          // Another account's lists never name the package.
          if (who === "other" && JSON.stringify(answer.body).includes(id)) failures.push(`${row.route} as other: shows the package`)
        }
      }
      assert.deepStrictEqual(failures, [])
    }))

  it.effect("scopes: review and export need apps:read, every change apps:write", () =>
    Effect.gen(function*() {
      // Two tokens of the owner: one may only read, one only write.
      const owner = yield* makeAgent([...rw])
      const tokenWith = (scope: "apps:read" | "apps:write") =>
        Effect.map(owner.app.tokens.create({ payload: { name: scope, scopes: [scope] } }), (t) => ({ secret: t.secret }))
      const reader = yield* tokenWith("apps:read")
      const writer = yield* tokenWith("apps:write")
      const mine = yield* seedPackage(owner)
      const failures: Array<string> = []
      for (const row of table) {
        const needsWrite = row.method !== "GET"
        const refused = needsWrite ? reader : writer
        const answer = yield* call(refused.secret, row.method, row.path(mine), row.body)
        if (answer.status !== 403 || answer.body.code !== "MISSING_SCOPE") {
          failures.push(`${row.route} without ${needsWrite ? "apps:write" : "apps:read"}: ${answer.status} ${answer.body.code}`)
        }
      }
      assert.deepStrictEqual(failures, [])
    }))
})
