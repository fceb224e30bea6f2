/**
 * MCP behind a plain round-robin balancer over three runners (balancer.ts:
 * every request to the next node, no affinity). The official SDK connects
 * through it — initialize, the initialized notification and the tool list
 * each reach another node — and calls `ask`; the person answers on the phone
 * (the Person API), and the tool returns the answer. Then the node the client
 * last reached is restarted (SIGTERM, start): the same client calls `ask`
 * again, and a client that reconnects from scratch does too.
 *
 * PostgreSQL only: the embedded database belongs to one process.
 */
import { assert, describe, it } from "@effect/vitest"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { Effect, Fiber } from "effect"
import { usingPostgres } from "../../support/database.ts"
import { makePerson, personClient, startCluster, within } from "../../support/cluster.ts"
import type { Cluster } from "../../support/cluster.ts"
import { roundRobin } from "./balancer.ts"

/** An SDK client connected through `url` with the token; closed with the scope. */
const connect = (url: string, token: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      const client = new Client({ name: "cluster-test", version: "1.0.0" })
      await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/api/agent/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${token}` } }
      }))
      return client
    }),
    (client) => Effect.promise(() => client.close())
  )

/** `ask` through `client`, answered on the phone through `cluster`'s first node once it shows there. */
const askAnswered = (client: Client, cluster: Cluster, session: string, title: string) =>
  Effect.gen(function*() {
    const asking = yield* Effect.forkChild(Effect.promise(() =>
      client.callTool({ name: "ask", arguments: { kind: "approval", title, prompt: "Approve from the phone." } })
    ))
    const app = yield* personClient(cluster.nodes[0]!, session)
    const shown = yield* within(20, app.interactions.list(), (list) => list.items.some((i) => i.title === title), `"${title}" on the phone`)
    yield* app.interactions.answer({ params: { id: shown.items.find((i) => i.title === title)!.id }, payload: { status: "approved" } })
    const result = yield* Fiber.join(asking)
    assert.isFalse(result.isError === true, `${title}: ${JSON.stringify(result.content)}`)
    const { interaction } = result.structuredContent as { interaction: { status: string; title: string } }
    assert.deepStrictEqual([interaction.title, interaction.status], [title, "approved"])
  })

describe.runIf(usingPostgres)("MCP through a round-robin over three runners", () => {
  it.live("the SDK connects and asks, and asks again after its node restarts, as it is and reconnected", () =>
    Effect.scoped(Effect.gen(function*() {
      const balancer = yield* roundRobin
      // The balancer is the service's public address, as in production.
      const cluster = yield* startCluster(3, { HERALD_PUBLIC_URL: balancer.url })
      balancer.route(cluster.nodes.map((n) => n.baseUrl))
      const mae = yield* makePerson(cluster, "Mae")
      const app = yield* personClient(cluster.nodes[0]!, mae.session)
      yield* app.devices.register({ payload: { platform: "ios", deviceName: "phone", pushToken: "mcp-phone" } })
      const { secret } = yield* app.tokens.create({ payload: { name: "agent", scopes: ["interactions:create", "interactions:read"] } })

      const client = yield* connect(balancer.url, secret)
      const { tools } = yield* Effect.promise(() => client.listTools())
      assert.deepStrictEqual(tools.map((t) => t.name).sort(), ["ask", "cancel", "wait"])
      yield* askAnswered(client, cluster, mae.session, "Ship it?")
      assert.isAtLeast(balancer.served().size, 3, `requests reached every node: ${[...balancer.served()].join("; ")}`)

      // The node the client last reached goes down and comes back (a deploy).
      const lastUrl = balancer.last()!
      const node = cluster.nodes.find((n) => n.baseUrl === lastUrl)!
      assert.isTrue(yield* node.stop, `node ${node.name} exited by itself on SIGTERM`)
      yield* node.start
      yield* askAnswered(client, cluster, mae.session, "Ship it again?")

      // A client that starts over (a new initialize) through the same balancer.
      const fresh = yield* connect(balancer.url, secret)
      yield* askAnswered(fresh, cluster, mae.session, "And once more?")
      console.log(`MCP through round-robin: requests per node ${[...balancer.served()].map(([url, n]) => `${url.split(":").at(-1)} ${n}`).join(", ")}; ` +
        `restarted node ${node.name}`)
    }).pipe(Effect.orDie)), { timeout: 180_000 })
})
