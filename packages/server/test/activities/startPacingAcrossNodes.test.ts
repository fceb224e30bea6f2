/**
 * Start pacing holds across nodes: a device gets at most one live-activity
 * start per start interval whichever node each start goes through, because
 * its slot is in the database both nodes share (activities/DevicePacing.ts).
 * Two nodes on one database, the sandbox provider, one start every 3 s.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { eventually } from "../../../../test/support/eventually.ts"
import { agentClient, makeAgent } from "../../../../test/support/server.ts"
import { phone, scopes, start } from "../http/activitySupport.ts"
import type { Agent } from "../http/activitySupport.ts"
import { on, TwoNodes, twoNodesLayer } from "../http/twoNodes.ts"

const INTERVAL_MS = 3000

/** When the sandbox sent the device each live-activity start, in order (epoch ms). */
const startsSent = (agent: Agent, deviceId: string) =>
  Effect.map(agent.app.devices.deliveries({ params: { id: deviceId } }), (r) =>
    r.items
      .filter((d) => (d.payload as { data?: Record<string, string> }).data?.event === "start")
      .map((d) => Date.parse(d.createdAt)))

layer(
  twoNodesLayer({ HERALD_ACTIVITY_START_INTERVAL_MS: String(INTERVAL_MS), HERALD_RATE_LIMIT_PER_MINUTE: "0", HERALD_SEND_LIMIT_PER_MINUTE: "0" }),
  { excludeTestServices: true, timeout: "90 seconds" }
)("start pacing across two nodes", (it) => {
  it.effect("a device's next start through the other node waits for the interval, and then goes", () =>
    Effect.gen(function*() {
      const [a, b] = yield* TwoNodes
      const agent = yield* on(a, makeAgent([...scopes]))
      const pixel = yield* phone(agent, "android")
      const first = yield* start(agent, { props: { title: "First" } })
      assert.strictEqual(first.accepted, 1)

      const other = yield* on(b, agentClient(agent.secret))
      const before = Date.now()
      const second = yield* other.activities.start({ payload: { props: { title: "Second" } } })
      assert.strictEqual(second.activity.readiness.queuedStarts, 1, "paced by the start the other node sent")
      const at = Date.parse(second.activity.readiness.nextStartAt ?? "")
      assert.isAbove(at, before + 1000, second.activity.readiness.nextStartAt ?? "null")
      assert.isAtMost(at, before + INTERVAL_MS + 500)

      const sentAt = yield* eventually(startsSent(agent, pixel.id), (s) => s.length === 2)
      assert.isAtLeast(sentAt[1]! - sentAt[0]!, INTERVAL_MS - 100)
    }))

  it.effect("two starts for one device racing through both nodes: one goes, the other waits its turn", () =>
    Effect.gen(function*() {
      const [a, b] = yield* TwoNodes
      const agent = yield* on(a, makeAgent([...scopes]))
      const pixel = yield* phone(agent, "android")
      const other = yield* on(b, agentClient(agent.secret))
      const answers = yield* Effect.all([
        start(agent, { props: { title: "Through A" } }),
        other.activities.start({ payload: { props: { title: "Through B" } } })
      ], { concurrency: "unbounded" })
      assert.deepStrictEqual(answers.map((r) => r.activity.readiness.queuedStarts).sort(), [0, 1])

      const sentAt = yield* eventually(startsSent(agent, pixel.id), (s) => s.length === 2)
      assert.isAtLeast(sentAt[1]! - sentAt[0]!, INTERVAL_MS - 100)
    }))
})
