/**
 * A prompt's messages delivered twice (issue 33: effect/cluster delivers at
 * least once). The expiry and an answer are each delivered at once on two
 * nodes (redeliverySupport.ts), and the stored expiry again by the real cluster
 * after it ran: the prompt ends once, with one outcome event, one request to
 * its reply webhook and one removal of its alert per device.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { ShardingConfig } from "effect/cluster"
import { Deadline } from "../../src/cluster/Deadline.ts"
import { PromptLive } from "../../src/interactions/PromptBehaviour.ts"
import { Prompt } from "../../src/interactions/PromptProtocol.ts"
import { eventually } from "../../../../test/support/eventually.ts"
import { moveDeadline, receiver } from "../../../../test/support/prompts.ts"
import { makeAgent, registerDevice, testServerLayer } from "../../../../test/support/server.ts"
import { count, onTwoNodes, processedOnce, redeliver } from "./redeliverySupport.ts"

type Agent = Effect.Success<ReturnType<typeof makeAgent>>

const scopes = ["services:read", "services:write", "interactions:create", "interactions:read"] as const

/** A pending prompt on the agent's phone, its outcomes going to a local receiver. */
const asked = Effect.gen(function*() {
  const agent = yield* makeAgent([...scopes])
  const phone = yield* registerDevice(agent, "redelivery-")
  const target = yield* receiver()
  const { webhook } = yield* agent.client.webhooks.create({ payload: { name: "outcomes", url: `${target.url}/outcome` } })
  const created = yield* agent.client.interactions.create({
    payload: { kind: "approval", title: "Ship v3?", prompt: "12 commits.", webhookId: webhook.id }
  })
  assert.strictEqual(created.accepted, 1)
  return { agent, phone, target, webhookId: webhook.id, id: created.interaction.id }
})

/** The webhook's deliveries once the first one was delivered (sent, answered 200). */
const deliveredOutcomes = (agent: Agent, webhookId: string) =>
  Effect.map(
    eventually(agent.client.webhooks.get({ params: { id: webhookId } }), (w) => w.deliveries[0]?.status === "delivered"),
    (w) => w.deliveries.map((d) => [d.type, d.status, d.attempts])
  )

/** Removal commands queued for the prompt's alert: one per device that showed it. */
const withdrawals = (id: string) =>
  count((sql) => sql`SELECT count(*)::int AS n FROM push_receipts WHERE item_id = ${id} AND purpose = 'withdraw'`)

const open = { HERALD_ALLOW_PRIVATE_NETWORK_TARGETS: "1" }

layer(Layer.merge(testServerLayer(open), ShardingConfig.layer()), { excludeTestServices: true, timeout: "60 seconds" })("a prompt's messages delivered twice", (it) => {
  it.effect("its expiry on two nodes at once ends it once: one event, one webhook request, one removal", () =>
    Effect.gen(function*() {
      const { agent, id, target, webhookId } = yield* asked
      const [first, second] = yield* onTwoNodes(Prompt, PromptLive, id)
      yield* Effect.all([first.Expire(Deadline.at(Date.now())), second.Expire(Deadline.at(Date.now()))], { concurrency: 2, discard: true })

      assert.strictEqual((yield* agent.client.interactions.get({ params: { id } })).status, "expired")
      assert.deepStrictEqual(yield* deliveredOutcomes(agent, webhookId), [["interaction.expired", "delivered", 1]])
      assert.lengthOf(target.received, 1)
      assert.strictEqual(JSON.parse(target.received[0]!.body).type, "interaction.expired")
      assert.strictEqual(yield* withdrawals(id), 1)
    }))

  it.effect("its stored expiry delivered again by the cluster after it ran emits nothing more", () =>
    Effect.gen(function*() {
      const { agent, id, target, webhookId } = yield* asked
      const expiry = { entityType: "Prompt", entityId: id, tag: "Expire" }
      yield* moveDeadline(id, Date.now())
      yield* processedOnce(expiry)
      assert.deepStrictEqual(yield* deliveredOutcomes(agent, webhookId), [["interaction.expired", "delivered", 1]])

      yield* redeliver(expiry)
      assert.strictEqual((yield* agent.client.interactions.get({ params: { id } })).status, "expired")
      assert.deepStrictEqual(yield* deliveredOutcomes(agent, webhookId), [["interaction.expired", "delivered", 1]])
      assert.lengthOf(target.received, 1)
      assert.strictEqual(yield* withdrawals(id), 1)
      const late = yield* Effect.flip(agent.app.interactions.answer({ params: { id }, payload: { status: "approved" } }))
      assert.strictEqual(late._tag, "InteractionNotPending")
    }))

  it.effect("an answer on two nodes at once is taken once (the other is refused); its expiry after it changes nothing", () =>
    Effect.gen(function*() {
      const { agent, id, target, webhookId } = yield* asked
      const [first, second] = yield* onTwoNodes(Prompt, PromptLive, id)
      const answer = { status: "approved" as const, response: null, userId: agent.person.id, deviceId: null }
      const results = yield* Effect.all([first.Answer(answer), second.Answer(answer)], { concurrency: 2, mode: "result" })
      const taken = results.flatMap((r) => r._tag === "Success" ? [r.success.status] : [])
      const refused = results.flatMap((r) => r._tag === "Failure" ? [r.failure._tag] : [])
      assert.deepStrictEqual([taken, refused], [["approved"], ["InteractionNotPending"]])

      yield* Effect.all([first.Expire(Deadline.at(Date.now())), second.Expire(Deadline.at(Date.now()))], { concurrency: 2, discard: true })
      const read = yield* agent.client.interactions.get({ params: { id } })
      assert.deepStrictEqual([read.status, read.respondingUserId], ["approved", agent.person.id])
      assert.deepStrictEqual(yield* deliveredOutcomes(agent, webhookId), [["interaction.answered", "delivered", 1]])
      assert.lengthOf(target.received, 1)
      assert.strictEqual(yield* withdrawals(id), 1)
    }))
})
