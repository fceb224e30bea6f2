/**
 * Who may call what on a connector: one table of route × caller × status,
 * walked over HTTP, each cell on a fresh connector of the owner's. The
 * owner's token (read and write scopes) reaches its connector; another
 * account gets 404 as for a connector that does not exist (on `access`, the
 * same 401 `PASS_INVALID` as a removed connector); a read-only token of the
 * owner gets 403 `MISSING_SCOPE` on writes; the Person API pass goes to the
 * owner only (no on-call group is linked here). Then each route's scope.
 */
import { assert, layer } from "@effect/vitest"
import type { Scope } from "@herald/api"
import { Effect } from "effect"
import { accessTable, tokenOf } from "../../../../test/support/accessTable.ts"
import type { AccessRoute, Answer } from "../../../../test/support/accessTable.ts"
import { makePerson, TestServerLayer } from "../../../../test/support/server.ts"
import type { Someone } from "../../../../test/support/teams.ts"
import { clientOf, connectorBody, outcome, scopes, secretOf } from "./support.ts"

type Caller = "owner" | "reader" | "other"

interface Cell {
  readonly connectorId: string
  readonly owner: Someone
  readonly other: Someone
  readonly secrets: Readonly<Record<Caller, string>>
}

const connector = (c: Cell) => `/api/agent/connectors/${c.connectorId}`
const read: ReadonlyArray<Scope> = ["connectors:read"]
const write: ReadonlyArray<Scope> = ["connectors:write"]
const digest = "0".repeat(64)

const table: ReadonlyArray<AccessRoute<Cell, Caller>> = [
  { name: "get", method: "GET", path: connector, scopes: read, expect: { owner: 200, reader: 200, other: 404 } },
  { name: "update", method: "PATCH", path: connector, body: { name: "Renamed" }, scopes: write, expect: { owner: 200, reader: 403, other: 404 } },
  { name: "heartbeat", method: "POST", path: (c) => `${connector(c)}/heartbeat`, scopes: write, expect: { owner: 200, reader: 403, other: 404 } },
  { name: "rotateSecret", method: "POST", path: (c) => `${connector(c)}/rotate-secret`, scopes: write, expect: { owner: 200, reader: 403, other: 404 } },
  // Another account's pass check fails as the owner's does: nothing tells whose connector it is.
  { name: "access", method: "POST", path: (c) => `${connector(c)}/access`, body: { session: "hcs_none" }, scopes: write, expect: { owner: 401, reader: 403, other: 401 } },
  {
    name: "callbackAccess",
    method: "POST",
    path: (c) => `${connector(c)}/callback-access`,
    body: () => ({ deliveryId: "whd_none", timestamp: Math.floor(Date.now() / 1000), signature: "AAAA", bodySha256: digest }),
    scopes: write,
    expect: { owner: 401, reader: 403, other: 404 }
  },
  // The Person API has no scopes: the reader's session is the owner's.
  { name: "issuePass", face: "person", method: "POST", path: (c) => `/api/app/connectors/${c.connectorId}/passes`, expect: { owner: 201, reader: 201, other: 404 } },
  { name: "remove", method: "DELETE", path: connector, scopes: write, expect: { owner: 200, reader: 403, other: 404 } }
]

/** Which error a refusal must carry, beyond its status. */
const codeFor = (route: string, status: number) =>
  ({ 401: route === "access" ? "PASS_INVALID" : "CALLBACK_INVALID", 403: "MISSING_SCOPE", 404: "NOT_FOUND" } as Record<number, string>)[status]

const codeCheck = (answer: Answer, route: string): ReadonlyArray<string> => {
  const want = codeFor(route, answer.status)
  const got = (answer.body as { code?: string } | null)?.code
  return want !== undefined && got !== want ? [`code ${got}, expected ${want}`] : []
}

/**
 * Another account with a connector of its own; each cell a fresh owner (an account keeps at most 20
 * connectors) with a token of every connector scope and one that only reads, and their connector.
 */
const seeder = Effect.gen(function*() {
  const other = yield* makePerson("conn-other")
  yield* Effect.orDie((yield* clientOf(other)).connectors.create({ payload: connectorBody() }))
  const otherSecret = yield* secretOf(other)
  return () =>
    Effect.gen(function*() {
      const owner = yield* makePerson("conn-owner")
      const { connector } = yield* Effect.orDie((yield* clientOf(owner)).connectors.create({ payload: connectorBody() }))
      const secrets = { owner: yield* secretOf(owner), reader: yield* tokenOf(owner, read), other: otherSecret }
      return { connectorId: connector.id, owner, other, secrets }
    })
})

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("connector access", (it) => {
  accessTable(it, {
    roles: ["owner", "reader", "other"],
    routes: table,
    seeder,
    bearer: (cell, caller, face) =>
      Effect.succeed(face === "agent" ? cell.secrets[caller] : (caller === "other" ? cell.other : cell.owner).session),
    lacking: (cell, missing) => tokenOf(cell.owner, scopes.filter((s) => s !== missing)),
    check: (answer, _cell, route) => codeCheck(answer, route.name)
  })

  it.effect("another account's list never shows the connector; once removed, it is gone", () =>
    Effect.gen(function*() {
      const cell = yield* Effect.flatMap(seeder, (seed) => seed())
      const other = yield* clientOf(cell.other)
      assert.notInclude((yield* Effect.orDie(other.connectors.list())).items.map((c) => c.id), cell.connectorId)
      const owner = yield* clientOf(cell.owner)
      yield* Effect.orDie(owner.connectors.remove({ params: { id: cell.connectorId } }))
      assert.strictEqual(yield* outcome(owner.connectors.get({ params: { id: cell.connectorId } })), "NotFound")
    }))
})
