/**
 * `defaultOnTimeout` over HTTP with the typed client: a prompt nobody answers
 * resolves at expiry with its default answer and `timedOut: true` — on the
 * record (GET), the long-poll, and the reply webhook's payload in every
 * preset — while an expiry without a default stays `expired` and a person's
 * answer is never marked timed out. A default that does not fit the kind (or
 * the choices) is refused at creation with 400 `ANSWER_DOES_NOT_FIT_KIND`.
 */
import { assert, layer } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { SqlClient } from "effect/sql"
import { eventually } from "../../../../test/support/eventually.ts"
import { moveDeadline, receiver } from "../../../../test/support/prompts.ts"
import { makeAgent, rawFetch, registerDevice, testServerLayer } from "../../../../test/support/server.ts"

type Agent = Effect.Success<ReturnType<typeof makeAgent>>
type CreatePayload = Parameters<Agent["client"]["interactions"]["create"]>[0]["payload"]

const scopes = ["interactions:create", "interactions:read", "inbox:read", "services:read", "services:write"] as const
const open = { HERALD_ALLOW_PRIVATE_NETWORK_TARGETS: "1", HERALD_RETRY_TIME_SCALE: "0.001" }

const ask = (agent: Agent, payload: Partial<CreatePayload>) =>
  agent.client.interactions.create({
    payload: { kind: "approval", title: "Deploy v2?", prompt: "3 migrations.", expiresInSeconds: 600, ...payload }
  })

/** The refusal of a create, as its status and body. */
const refusal = (agent: Agent, payload: Partial<CreatePayload>) =>
  Effect.flip(ask(agent, payload)).pipe(Effect.map((e) => ({ tag: e._tag, code: "code" in e ? e.code : undefined, error: "error" in e ? e.error : undefined })))

layer(testServerLayer(open), { excludeTestServices: true, timeout: "60 seconds" })("defaultOnTimeout", (it) => {
  it.effect("an unanswered approval resolves with its default at expiry: timedOut on GET, the long-poll and every webhook preset", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      yield* registerDevice(agent, "timeout-")
      const target = yield* receiver()
      for (const preset of ["generic", "chat", "assistant"] as const) {
        yield* agent.client.webhooks.create({
          payload: { name: preset, url: `${target.url}/${preset}`, preset, isDefault: preset === "generic" }
        })
      }
      const hooks = (yield* agent.client.webhooks.list()).items
      const created = yield* ask(agent, { defaultOnTimeout: "denied", webhookId: hooks.find((h) => h.preset === "assistant")!.id })
      const pending = created.interaction
      assert.deepStrictEqual([pending.status, pending.defaultOnTimeout, pending.timedOut], ["pending", "denied", false])

      const waiter = yield* Effect.forkChild(agent.client.interactions.wait({ params: { id: pending.id }, query: { timeout: 30 } }))
      yield* moveDeadline(pending.id, Date.now())
      const waited = yield* Fiber.join(waiter)
      assert.deepStrictEqual(
        [waited.status, waited.timedOut, waited.response, waited.respondingUserId, waited.respondingDeviceId],
        ["denied", true, null, null, null]
      )
      assert.isNotNull(waited.respondedAt)
      const read = yield* agent.client.interactions.get({ params: { id: pending.id } })
      assert.deepStrictEqual(read, waited)

      // The account default (generic) and the prompt's own (assistant): one `interaction.answered` each, saying timedOut.
      const arrived = yield* eventually(Effect.sync(() => [...target.received]), (r) => r.length === 2)
      const generic = JSON.parse(arrived.find((r) => r.path === "/generic")!.body)
      assert.strictEqual(generic.type, "interaction.answered")
      assert.deepStrictEqual([generic.data.interaction.status, generic.data.interaction.timedOut], ["denied", true])
      const assistant = JSON.parse(arrived.find((r) => r.path === "/assistant")!.body)
      assert.deepStrictEqual([assistant.type, assistant.status, assistant.timedOut], ["interaction.answered", "denied", true])
      assert.include(assistant.message, "Nobody answered \"Deploy v2?\" before it expired")
      assert.include(assistant.message, "default answer: denied")

      // Nobody saw it: its inbox copy stays unread.
      const inbox = yield* agent.client.inbox.get({ params: { id: `interaction:${pending.id}` } })
      assert.strictEqual(inbox.status, "denied")
      assert.isNull(inbox.readAt)
    }))

  it.effect("yes_no and reply defaults; a reply's default is one of its choices; the chat line says timed out", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      const target = yield* receiver()
      yield* agent.client.webhooks.create({ payload: { name: "chat", url: `${target.url}/chat`, preset: "chat", isDefault: true } })
      const yesNo = (yield* ask(agent, { kind: "yes_no", title: "Green?", defaultOnTimeout: "yes" })).interaction
      const reply = (yield* ask(agent, { kind: "reply", title: "Which region?", choices: ["eu", "us"], defaultOnTimeout: "eu" })).interaction
      const free = (yield* ask(agent, { kind: "reply", title: "Any words?", defaultOnTimeout: "Nothing from me." })).interaction
      for (const p of [yesNo, reply, free]) yield* moveDeadline(p.id, Date.now())
      const read = (id: string) => agent.client.interactions.get({ params: { id } })
      const ended = yield* Effect.forEach([yesNo, reply, free], (p) => eventually(read(p.id), (i) => i.status !== "pending"))
      assert.deepStrictEqual(
        ended.map((i) => [i.status, i.response, i.timedOut]),
        [["yes", null, true], ["replied", "eu", true], ["replied", "Nothing from me.", true]]
      )
      const lines = (yield* eventually(Effect.sync(() => [...target.received]), (r) => r.length === 3)).map((r) => JSON.parse(r.body).text)
      assert.sameMembers(lines, [
        "“Green?” timed out unanswered; default answer: yes.",
        "“Which region?” timed out unanswered; default answer: eu",
        "“Any words?” timed out unanswered; default answer: Nothing from me."
      ])
    }))

  it.effect("no default: expired with timedOut false; a person's answer is never timed out and the default then does nothing", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      const phone = yield* registerDevice(agent, "answered-")
      const plain = (yield* ask(agent, {})).interaction
      yield* moveDeadline(plain.id, Date.now())
      const expired = yield* eventually(agent.client.interactions.get({ params: { id: plain.id } }), (i) => i.status !== "pending")
      assert.deepStrictEqual([expired.status, expired.timedOut, expired.defaultOnTimeout], ["expired", false, null])

      const answered = (yield* ask(agent, { defaultOnTimeout: "denied" })).interaction
      yield* agent.app.interactions.answer({ params: { id: answered.id }, payload: { status: "approved", deviceId: phone.id } })
      yield* moveDeadline(answered.id, Date.now())
      // The deadline fires (its stored message is processed) and finds it answered: it stays approved.
      const sql = yield* SqlClient.SqlClient
      yield* eventually(
        sql<{ processed: boolean }>`
          SELECT processed FROM cluster_messages WHERE entity_type = 'Prompt' AND entity_id = ${answered.id} AND tag = 'Expire'`,
        (rows) => rows[0]?.processed === true
      )
      const after = yield* agent.client.interactions.get({ params: { id: answered.id } })
      assert.deepStrictEqual([after.status, after.timedOut, after.respondingDeviceId], ["approved", false, phone.id])
    }))

  it.effect("a default that does not fit the kind or the choices: 400 ANSWER_DOES_NOT_FIT_KIND, nothing created", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      const cases: ReadonlyArray<readonly [Partial<CreatePayload>, string]> = [
        [{ kind: "approval", defaultOnTimeout: "yes" }, "defaultOnTimeout of an approval prompt is `approved` or `denied`."],
        [{ kind: "yes_no", defaultOnTimeout: "denied" }, "defaultOnTimeout of a yes_no prompt is `yes` or `no`."],
        [{ kind: "reply", choices: ["eu", "us"], defaultOnTimeout: "asia" }, "defaultOnTimeout of a reply prompt with choices is one of them (\"eu\", \"us\")."]
      ]
      for (const [payload, error] of cases) {
        assert.deepStrictEqual(yield* refusal(agent, payload), { tag: "AnswerMismatch", code: "ANSWER_DOES_NOT_FIT_KIND", error })
      }
      // An empty default never reaches the rule: the schema refuses it (the typed client would not send it).
      const empty = yield* rawFetch("/api/agent/interactions", {
        method: "POST",
        headers: { authorization: `Bearer ${agent.secret}`, "content-type": "application/json" },
        body: JSON.stringify({ kind: "reply", title: "Q", prompt: "Q", defaultOnTimeout: "" })
      })
      assert.strictEqual(empty.status, 400)
      assert.strictEqual((empty.body as { code: string }).code, "VALIDATION_FAILED")
      assert.include(JSON.stringify(empty.body), "defaultOnTimeout")
      assert.deepStrictEqual((yield* agent.client.interactions.list()).items, [])
    }))
})
