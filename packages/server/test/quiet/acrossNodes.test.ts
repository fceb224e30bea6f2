/**
 * Quiet hours across two nodes on one PostgreSQL (PostgreSQL only: on the
 * embedded database there is one process): a person's change on one node
 * reaches the other's cache by `NOTIFY herald_quiet`, so a push sent through
 * the other node is held — and, unmuted there, summarised once.
 */
import { assert, describe, layer } from "@effect/vitest"
import { Context, Effect } from "effect"
import { QuietGate } from "../../src/quiet/QuietGate.ts"
import { eventually } from "../../../../test/support/eventually.ts"
import { usingPostgres } from "../../../../test/support/database.ts"
import { sentNotification } from "../../../../test/support/notifications.ts"
import { agentClient, makeAgent, personClient, registerDevice } from "../../../../test/support/server.ts"
import { on, TwoNodes, twoNodesLayer } from "../http/twoNodes.ts"
import type { Node } from "../http/twoNodes.ts"

/** The node's own settings cache (every node builds one). */
const gateOf = (node: Node) => Context.get(node.context as unknown as Context.Context<QuietGate>, QuietGate)

describe.runIf(usingPostgres)("quiet hours across nodes", () => {
  layer(twoNodesLayer({}), { timeout: "90 seconds", excludeTestServices: true })("two nodes", (it) => {
    it.effect("a mute set on one node holds a push sent through the other; unmuting there summarises it", () =>
      Effect.gen(function*() {
        const [a, b] = yield* TwoNodes
        const agent = yield* on(a, makeAgent(["notifications:send"]))
        const phone = yield* on(a, registerDevice(agent, "iphone-"))
        yield* agent.app.quietHours.put({ payload: { timeZone: "UTC", windows: [], mode: "hold" } })
        yield* agent.app.quietHours.mute({ payload: { hours: 3 } })

        // Node b heard of it (its cache, not a statement per send, decides).
        yield* eventually(Effect.sync(() => gateOf(b).settings(agent.person.id).mutedUntil), (until) => until !== null)
        const viaB = yield* on(b, Effect.gen(function*() {
          const client = yield* agentClient(agent.secret)
          return yield* sentNotification(client.notifications.create({ payload: { title: "Held on b", body: "x" } }))
        }))
        assert.strictEqual(viaB.accepted, 0)
        assert.strictEqual((yield* agent.app.quietHours.get()).current.held, 1)

        const unmuted = yield* on(b, Effect.gen(function*() {
          const app = yield* personClient(agent.session)
          return yield* app.quietHours.unmute()
        }))
        assert.isFalse(unmuted.current.quiet)
        yield* eventually(Effect.sync(() => gateOf(a).settings(agent.person.id).mutedUntil), (until) => until === null)
        const items = yield* eventually(
          Effect.map(agent.app.devices.deliveries({ params: { id: phone.id } }), (d) => d.items),
          (items) => items.length >= 1
        )
        assert.deepStrictEqual(items.map((i) => (i.payload as { aps: { alert: { title: string } } }).aps.alert.title), ["1 notification during quiet hours"])
      }))
  })
})
