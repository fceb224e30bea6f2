/**
 * Who may call what on a connector: one table of route × caller × outcome.
 * The owner's token (read and write scopes) reaches its connector; another
 * account gets 404 as for a connector that does not exist (on `access`, the
 * same 401 `PASS_INVALID` as a removed connector); a read-only token of the
 * owner gets 403 `MISSING_SCOPE` on writes; the Person API pass goes to the
 * owner only (no on-call group is linked here).
 */
import type { HeraldClient, HeraldPersonClient } from "@herald/client"
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { makePerson, personClient, TestServerLayer } from "../../../../test/support/server.ts"
import { agentOf } from "../../../../test/support/teams.ts"
import { clientOf, connectorBody, outcome } from "./support.ts"

type Caller = "owner" | "reader" | "other"
interface Callers {
  readonly agent: Record<Caller, HeraldClient["Service"]>
  readonly app: Record<"owner" | "other", HeraldPersonClient["Service"]>
}
type Call = (c: Callers, role: Caller, id: string) => Effect.Effect<string>

const digest = "0".repeat(64)
const routes: Record<string, Call> = {
  get: (c, r, id) => outcome(c.agent[r].connectors.get({ params: { id } })),
  update: (c, r, id) => outcome(c.agent[r].connectors.update({ params: { id }, payload: { name: "Renamed" } })),
  heartbeat: (c, r, id) => outcome(c.agent[r].connectors.heartbeat({ params: { id } })),
  rotateSecret: (c, r, id) => outcome(c.agent[r].connectors.rotateSecret({ params: { id } })),
  access: (c, r, id) => outcome(c.agent[r].connectors.access({ params: { id }, payload: { session: "hcs_none" } })),
  callbackAccess: (c, r, id) =>
    outcome(c.agent[r].connectors.callbackAccess({
      params: { id },
      payload: { deliveryId: "whd_none", timestamp: Math.floor(Date.now() / 1000), signature: "AAAA", bodySha256: digest }
    })),
  issuePass: (c, r, id) => r === "reader" ? Effect.succeed("n/a") : outcome(c.app[r].connectors.issuePass({ params: { id } })),
  remove: (c, r, id) => outcome(c.agent[r].connectors.remove({ params: { id } }))
}

// [route, caller, expected]; `remove` by the owner runs last.
const table: ReadonlyArray<readonly [keyof typeof routes, Caller, string]> = [
  ["get", "owner", "ok"], ["get", "reader", "ok"], ["get", "other", "NotFound"],
  ["update", "owner", "ok"], ["update", "reader", "MissingScope"], ["update", "other", "NotFound"],
  ["heartbeat", "owner", "ok"], ["heartbeat", "reader", "MissingScope"], ["heartbeat", "other", "NotFound"],
  ["rotateSecret", "owner", "ok"], ["rotateSecret", "reader", "MissingScope"], ["rotateSecret", "other", "NotFound"],
  ["access", "owner", "PassInvalid"], ["access", "reader", "MissingScope"], ["access", "other", "PassInvalid"],
  ["callbackAccess", "owner", "CallbackInvalid"], ["callbackAccess", "reader", "MissingScope"], ["callbackAccess", "other", "NotFound"],
  ["issuePass", "owner", "ok"], ["issuePass", "other", "NotFound"],
  ["remove", "reader", "MissingScope"], ["remove", "other", "NotFound"], ["remove", "owner", "ok"]
]

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("connector access", (it) => {
  it.effect("route × caller table (concealment of another account's connector)", () =>
    Effect.gen(function*() {
      const owner = yield* makePerson("conn-owner")
      const other = yield* makePerson("conn-other")
      const callers: Callers = {
        agent: { owner: yield* clientOf(owner), reader: yield* agentOf(owner, ["connectors:read"]), other: yield* clientOf(other) },
        app: { owner: yield* personClient(owner.session), other: yield* personClient(other.session) }
      }
      const { connector } = yield* callers.agent.owner.connectors.create({ payload: connectorBody() })
      // The other account has a connector of its own: the list shows only one's own.
      yield* callers.agent.other.connectors.create({ payload: connectorBody() })
      assert.notInclude((yield* callers.agent.other.connectors.list()).items.map((c) => c.id), connector.id)

      const seen: Array<string> = []
      const expected: Array<string> = []
      for (const [route, role, want] of table) {
        seen.push(`${route} ${role} ${yield* routes[route]!(callers, role, connector.id)}`)
        expected.push(`${route} ${role} ${want}`)
      }
      assert.deepStrictEqual(seen, expected)
      assert.strictEqual(yield* outcome(callers.agent.owner.connectors.get({ params: { id: connector.id } })), "NotFound")
    }))
})
