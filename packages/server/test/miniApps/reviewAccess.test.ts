/**
 * Who may review a package, as one table walked over HTTP: every review route
 * for the package's owner, another account, and the owner naming an unknown
 * id. Another account's package is concealed (404, as if it did not exist),
 * and its review list and export never show it. Each cell acts on a fresh
 * package, so one cell's change never decides another's answer. Then the
 * scopes: review and export need apps:read, every change apps:write.
 */
import { layer } from "@effect/vitest"
import type { Scope } from "@herald/api"
import { Effect } from "effect"
import { accessTable, tokenOf } from "../../../../test/support/accessTable.ts"
import type { AccessRoute } from "../../../../test/support/accessTable.ts"
import { makeAgent, TestServerLayer } from "../../../../test/support/server.ts"
import { seedPackage } from "./reviewSupport.ts"

type Who = "owner" | "other" | "unknown"

interface Cell {
  readonly packageId: string
  readonly owner: Effect.Success<ReturnType<typeof makeAgent>>
  readonly other: Effect.Success<ReturnType<typeof makeAgent>>
}

/** The package the caller names: the owner's, or for `unknown` an id nobody has. */
const target = (c: Cell, who: Who) => who === "unknown" ? "pkg_00000000000000000000000000" : c.packageId
const perPackage = (ok: number): Record<Who, number> => ({ owner: ok, other: 404, unknown: 404 })
const read: ReadonlyArray<Scope> = ["apps:read"]
const write: ReadonlyArray<Scope> = ["apps:write"]
const rw: ReadonlyArray<Scope> = ["apps:read", "apps:write"]

const table: ReadonlyArray<AccessRoute<Cell, Who>> = [
  { name: "GET /mini-apps/review", method: "GET", path: () => "/api/agent/mini-apps/review", scopes: read, expect: { owner: 200, other: 200, unknown: 200 } },
  { name: "GET /mini-apps/export", method: "GET", path: () => "/api/agent/mini-apps/export", scopes: read, expect: { owner: 200, other: 200, unknown: 200 } },
  { name: "POST /mini-apps/{id}/offer", method: "POST", path: (c, w) => `/api/agent/mini-apps/${target(c, w)}/offer`, scopes: write, expect: perPackage(200) },
  {
    name: "POST /mini-apps/{id}/report",
    method: "POST",
    path: (c, w) => `/api/agent/mini-apps/${target(c, w)}/report`,
    body: { reason: "spam" },
    scopes: write,
    expect: perPackage(201)
  },
  { name: "POST /mini-apps/{id}/block", method: "POST", path: (c, w) => `/api/agent/mini-apps/${target(c, w)}/block`, scopes: write, expect: perPackage(200) },
  { name: "POST /mini-apps/{id}/disable", method: "POST", path: (c, w) => `/api/agent/mini-apps/${target(c, w)}/disable`, scopes: write, expect: perPackage(200) },
  { name: "DELETE /mini-apps/{id}", method: "DELETE", path: (c, w) => `/api/agent/mini-apps/${target(c, w)}`, scopes: write, expect: perPackage(200) }
]

/** Two accounts; each cell a fresh package of the owner's. */
const seeder = Effect.gen(function*() {
  const owner = yield* makeAgent([...rw])
  const other = yield* makeAgent([...rw])
  return () => Effect.map(seedPackage(owner), (packageId): Cell => ({ packageId, owner, other }))
})

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("mini-app review access", (it) => {
  accessTable(it, {
    roles: ["owner", "other", "unknown"],
    routes: table,
    seeder,
    bearer: (cell, who) => Effect.succeed(who === "other" ? cell.other.secret : cell.owner.secret),
    lacking: (cell, missing) => tokenOf(cell.owner, rw.filter((s) => s !== missing)),
    check: (answer, cell, _route, who) => [
      ...(answer.status === 404 && (answer.body as { code?: string }).code !== "NOT_FOUND" ? [`code ${(answer.body as { code?: string }).code}`] : []),
      // Another account's lists never name the package.
      ...(who === "other" && JSON.stringify(answer.body).includes(cell.packageId) ? ["shows the package"] : [])
    ]
  })
})
