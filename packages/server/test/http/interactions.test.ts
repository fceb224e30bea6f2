/**
 * Prompts over HTTP with the typed client: creation and its pushes, every
 * transition of the status table, each kind's answers, first-answer-wins
 * under concurrent answers, waiters woken on answer, cancel and expiry, and
 * the concealment of other tokens' prompts.
 */
import { assert, layer } from "@effect/vitest"
import { Duration, Effect, Fiber } from "effect"
import { SqlClient } from "effect/sql"
import { createHash } from "node:crypto"
import { eventually } from "../../../../test/support/eventually.ts"
import { moveDeadline } from "../../../../test/support/prompts.ts"
import { agentClient, makeAgent, rawFetch, registerDevice, TestServerLayer } from "../../../../test/support/server.ts"

type Agent = Effect.Success<ReturnType<typeof makeAgent>>

const scopes = ["interactions:create", "interactions:read"] as const

const ask = (agent: Agent, payload: Partial<Parameters<Agent["client"]["interactions"]["create"]>[0]["payload"]> = {}) =>
  agent.client.interactions.create({
    payload: { kind: "approval", title: "Deploy v2 to production?", prompt: "3 migrations, 12 commits.", ...payload }
  })

const answer = (agent: Agent, id: string, payload: Parameters<Agent["app"]["interactions"]["answer"]>[0]["payload"]) =>
  agent.app.interactions.answer({ params: { id }, payload })

/** Another token of the same person. */
const secondToken = (agent: Agent) =>
  Effect.flatMap(
    agent.app.tokens.create({ payload: { name: "second agent", scopes: [...scopes] } }),
    (created) => agentClient(created.secret)
  )

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("interactions", (it) => {
  it.effect("creates a pending prompt, pushes it with its answer buttons and files it in the inbox and feed", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes, "inbox:read", "events:read"])
      const phone = yield* registerDevice(agent, "iphone-")
      const created = yield* ask(agent, { choices: [], expiresInSeconds: 600, projectId: "deploys" })
      const i = created.interaction
      assert.match(i.id, /^int_/)
      assert.strictEqual(i.status, "pending")
      assert.strictEqual(i.kind, "approval")
      assert.strictEqual(i.presentation, "notification")
      assert.strictEqual(created.accepted, 1)
      assert.strictEqual(i.accepted, 1)
      assert.strictEqual(created.queued, 0)
      assert.isNull(i.respondedAt)
      assert.strictEqual(Date.parse(i.expiresAt) - Date.parse(i.createdAt), 600_000)
      // An independent computation of the digest: canonical JSON (sorted keys) of {kind, title, prompt, choices}.
      const canonical = `{"choices":[],"kind":"approval","prompt":"3 migrations, 12 commits.","title":"Deploy v2 to production?"}`
      assert.strictEqual(i.actionDigest, createHash("sha256").update(canonical).digest("hex"))

      const [push] = (yield* agent.app.devices.deliveries({ params: { id: phone.id } })).items
      const aps = (push?.payload as { aps: { alert: unknown; category: string }; herald: Record<string, string> })
      assert.deepStrictEqual(aps.aps.alert, { title: "Deploy v2 to production?", body: "3 migrations, 12 commits." })
      assert.strictEqual(aps.aps.category, "HERALD_APPROVAL")
      assert.strictEqual(aps.herald.interactionId, i.id)
      assert.strictEqual(aps.herald.actionDigest, i.actionDigest)

      const detail = yield* agent.client.inbox.get({ params: { id: `interaction:${i.id}` } })
      assert.strictEqual(detail.origin, "interaction")
      assert.strictEqual(detail.status, "pending")
      assert.strictEqual(detail.projectId, "deploys")
      const feed = yield* agent.client.history.activityFeed()
      assert.strictEqual(feed.items[0]?.kind, "response")
      assert.isNull(feed.items[0]?.result)

      yield* answer(agent, i.id, { status: "approved", deviceId: phone.id })
      // Answered: the alert leaves the tray (a silent removal command naming it).
      const [, removal] = yield* eventually(
        Effect.map(agent.app.devices.deliveries({ params: { id: phone.id } }), (r) => r.items),
        (items) => items.length === 2
      )
      assert.strictEqual(removal?.pushType, "background")
      assert.deepStrictEqual((removal?.payload as { herald: unknown }).herald, { withdraw: i.id })
      const after = yield* agent.client.inbox.get({ params: { id: `interaction:${i.id}` } })
      assert.strictEqual(after.status, "approved")
      assert.isNotNull(after.readAt)
      const feedAfter = yield* agent.client.history.activityFeed()
      assert.strictEqual(feedAfter.items[0]?.result, "approved")
    }))

  it.effect("the reserved project word unfiled is refused, as for notifications", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      const refused = yield* rawFetch("/api/agent/interactions", {
        method: "POST",
        headers: { authorization: `Bearer ${agent.secret}`, "content-type": "application/json" },
        body: JSON.stringify({ kind: "approval", title: "Deploy?", prompt: "v2", projectId: "unfiled" })
      })
      assert.strictEqual(refused.status, 400)
      assert.strictEqual((refused.body as { code: string }).code, "VALIDATION_FAILED")
      assert.strictEqual((yield* ask(agent, { projectId: "deploys" })).interaction.status, "pending")
    }))

  it.effect("each kind takes only its own answers", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      const cases = [
        { kind: "approval", good: [{ status: "approved" }, { status: "denied" }], bad: [{ status: "yes" }, { status: "replied", response: "ok" }, { status: "approved", response: "why" }] },
        { kind: "yes_no", good: [{ status: "yes" }, { status: "no" }], bad: [{ status: "approved" }, { status: "replied", response: "x" }] },
        { kind: "reply", good: [{ status: "replied", response: "Ship it after lunch." }], bad: [{ status: "replied" }, { status: "yes" }] }
      ] as const
      for (const c of cases) {
        for (const bad of c.bad) {
          const { interaction } = yield* ask(agent, { kind: c.kind })
          const error = yield* Effect.flip(answer(agent, interaction.id, bad))
          assert.strictEqual(error._tag, "AnswerMismatch", `${c.kind} ${JSON.stringify(bad)}`)
          assert.strictEqual((yield* agent.client.interactions.get({ params: { id: interaction.id } })).status, "pending")
        }
        for (const good of c.good) {
          const { interaction } = yield* ask(agent, { kind: c.kind })
          const answered = yield* answer(agent, interaction.id, good)
          assert.strictEqual(answered.status, good.status)
          assert.strictEqual(answered.response, "response" in good ? good.response : null)
          assert.strictEqual(answered.respondingUserId, agent.person.id)
          assert.isNull(answered.respondingDeviceId)
          assert.isNotNull(answered.respondedAt)
        }
      }
    }))

  it.effect("the first answer wins: of ten concurrent answers one succeeds, nine get 409", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      const { interaction } = yield* ask(agent, { kind: "yes_no" })
      const results = yield* Effect.forEach(
        Array.from({ length: 10 }, (_, n) => n % 2 === 0 ? "yes" as const : "no" as const),
        (status) => Effect.result(answer(agent, interaction.id, { status })),
        { concurrency: "unbounded" }
      )
      const wins = results.filter((r) => r._tag === "Success")
      const conflicts = results.filter((r) => r._tag === "Failure" && r.failure._tag === "InteractionNotPending")
      assert.strictEqual(wins.length, 1)
      assert.strictEqual(conflicts.length, 9)
      const final = yield* agent.client.interactions.get({ params: { id: interaction.id } })
      assert.strictEqual(final.status, wins[0]!._tag === "Success" ? wins[0]!.success.status : "")
    }))

  it.effect("an answer records the responding device, which must be the person's", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      const other = yield* makeAgent([...scopes])
      const phone = yield* registerDevice(agent, "iphone-")
      const strangersPhone = yield* registerDevice(other, "iphone-")
      const { interaction } = yield* ask(agent)
      const refused = yield* Effect.flip(answer(agent, interaction.id, { status: "denied", deviceId: strangersPhone.id }))
      assert.strictEqual(refused._tag, "NotFound")
      const answered = yield* answer(agent, interaction.id, { status: "denied", deviceId: phone.id })
      assert.strictEqual(answered.respondingDeviceId, phone.id)
      // Another person cannot answer (or see) it.
      const stranger = yield* Effect.flip(answer(other, interaction.id, { status: "approved" }))
      assert.strictEqual(stranger._tag, "NotFound")
    }))

  it.effect("wait answers as soon as the prompt is answered, and with the pending prompt at its timeout", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      const { interaction } = yield* ask(agent)
      const started = Date.now()
      const timedOut = yield* agent.client.interactions.wait({ params: { id: interaction.id }, query: { timeout: 1 } })
      assert.strictEqual(timedOut.status, "pending")
      assert.isAtLeast(Date.now() - started, 950)

      const waiter = yield* Effect.forkChild(agent.client.interactions.wait({ params: { id: interaction.id }, query: { timeout: 30 } }))
      yield* Effect.sleep(Duration.millis(200))
      const answeredAt = Date.now()
      yield* answer(agent, interaction.id, { status: "approved" })
      const woken = yield* Fiber.join(waiter)
      assert.strictEqual(woken.status, "approved")
      assert.isBelow(Date.now() - answeredAt, 1000)
      // An ended prompt answers at once.
      const again = yield* agent.client.interactions.wait({ params: { id: interaction.id } })
      assert.strictEqual(again.status, "approved")
    }))

  it.effect("waiters hold no database connection: forty of them park while other requests run, then all wake", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      const { interaction } = yield* ask(agent)
      // The test database has a pool of at most four connections (one when embedded).
      const waiters = yield* Effect.forkChild(Effect.forEach(
        Array.from({ length: 40 }, () => interaction.id),
        (id) => agent.client.interactions.wait({ params: { id }, query: { timeout: 30 } }),
        { concurrency: "unbounded" }
      ))
      yield* Effect.sleep(Duration.millis(300))
      for (let i = 0; i < 5; i++) {
        const read = yield* agent.client.interactions.get({ params: { id: interaction.id } }).pipe(Effect.timeout(Duration.seconds(2)))
        assert.strictEqual(read.status, "pending")
      }
      yield* answer(agent, interaction.id, { status: "denied" })
      const woken = yield* Fiber.join(waiters)
      assert.strictEqual(woken.length, 40)
      assert.isTrue(woken.every((i) => i.status === "denied"))
    }))

  it.effect("cancel: only by the creating token, wakes waiters, and a second cancel or a late answer gets 409", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      const sibling = yield* secondToken(agent)
      const stranger = yield* makeAgent([...scopes])
      const { interaction } = yield* ask(agent)
      const id = interaction.id

      // Other tokens, of the same account or not, see nothing.
      for (const client of [sibling, stranger.client]) {
        assert.strictEqual((yield* Effect.flip(client.interactions.get({ params: { id } })))._tag, "NotFound")
        assert.strictEqual((yield* Effect.flip(client.interactions.wait({ params: { id }, query: { timeout: 1 } })))._tag, "NotFound")
        assert.strictEqual((yield* Effect.flip(client.interactions.cancel({ params: { id } })))._tag, "NotFound")
      }
      // …but the account's list shows prompts from every source.
      const listed = yield* sibling.interactions.list()
      assert.deepStrictEqual(listed.items.map((p) => p.id), [id])
      assert.strictEqual(listed.items[0]?.sourceName, "test agent")
      assert.deepStrictEqual((yield* stranger.client.interactions.list()).items, [])

      const waiter = yield* Effect.forkChild(agent.client.interactions.wait({ params: { id }, query: { timeout: 30 } }))
      yield* Effect.sleep(Duration.millis(200))
      const canceled = yield* agent.client.interactions.cancel({ params: { id } })
      assert.strictEqual(canceled.status, "canceled")
      assert.isNotNull(canceled.canceledAt)
      assert.strictEqual((yield* Fiber.join(waiter)).status, "canceled")

      assert.strictEqual((yield* Effect.flip(agent.client.interactions.cancel({ params: { id } })))._tag, "InteractionNotPending")
      assert.strictEqual((yield* Effect.flip(answer(agent, id, { status: "approved" })))._tag, "InteractionNotPending")
      // On the wire, as ARCHITECTURE gives them: 409 CONFLICT once not pending, 400 for an answer of another kind.
      const answerRaw = (promptId: string, status: string) =>
        rawFetch(`/api/app/interactions/${promptId}/answer`, {
          method: "POST",
          headers: { authorization: `Bearer ${agent.session}`, "content-type": "application/json" },
          body: JSON.stringify({ status })
        })
      const late = yield* answerRaw(id, "approved")
      assert.deepStrictEqual([late.status, (late.body as { code: string }).code], [409, "CONFLICT"])
      const second = (yield* ask(agent)).interaction.id
      const other = yield* answerRaw(second, "yes")
      assert.deepStrictEqual([other.status, (other.body as { code: string }).code], [400, "ANSWER_DOES_NOT_FIT_KIND"])
      yield* agent.client.interactions.cancel({ params: { id: second } })
      assert.deepStrictEqual((yield* agent.client.interactions.list()).items, [])
      assert.deepStrictEqual((yield* agent.app.interactions.list()).items, [])
    }))

  it.effect("expiry moves a prompt to expired at its deadline and wakes its waiters", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      const { interaction } = yield* ask(agent, { kind: "reply", expiresInSeconds: 60 })
      const waiter = yield* Effect.forkChild(agent.client.interactions.wait({ params: { id: interaction.id }, query: { timeout: 30 } }))
      const deadline = Date.now() + 1000
      yield* moveDeadline(interaction.id, deadline)
      const expired = yield* Fiber.join(waiter)
      assert.strictEqual(expired.status, "expired")
      // decisions.md: out of `pending` within one second of the deadline.
      assert.isBelow(Date.now() - deadline, 1000)
      assert.isAtLeast(Date.now(), deadline)
      assert.strictEqual((yield* Effect.flip(answer(agent, interaction.id, { status: "replied", response: "late" })))._tag, "InteractionNotPending")
    }))

  it.effect("Idempotency-Key replays the first answer with 200; an unknown webhookId answers 404", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      const first = yield* agent.client.interactions.create({
        headers: { "idempotency-key": "deploy-42" },
        payload: { kind: "yes_no", title: "Rollback?", prompt: "Error rate 4%." }
      })
      const replay = yield* agent.client.interactions.create({
        headers: { "idempotency-key": "deploy-42" },
        payload: { kind: "yes_no", title: "Rollback?", prompt: "Error rate 4%." }
      })
      assert.strictEqual(replay.idempotent, true)
      assert.strictEqual(replay.interaction.id, first.interaction.id)
      const reused = yield* Effect.flip(agent.client.interactions.create({
        headers: { "idempotency-key": "deploy-42" },
        payload: { kind: "yes_no", title: "Rollback now?", prompt: "Error rate 4%." }
      }))
      assert.strictEqual(reused._tag, "IdempotencyKeyReused")
      const unknown = yield* Effect.flip(ask(agent, { webhookId: "whk_doesnotexist" }))
      assert.strictEqual(unknown._tag, "NotFound")
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM interactions WHERE user_id = ${agent.person.id}`
      assert.strictEqual(rows[0]?.count, 1)
    }))

  it.effect("scopes: reading needs interactions:read, asking and canceling interactions:create", () =>
    Effect.gen(function*() {
      const reader = yield* makeAgent(["interactions:read"])
      const denied = yield* Effect.flip(ask(reader))
      assert.strictEqual(denied._tag, "MissingScope")
      const asker = yield* makeAgent(["interactions:create"])
      const { interaction } = yield* ask(asker)
      const noRead = yield* Effect.flip(asker.client.interactions.wait({ params: { id: interaction.id } }))
      assert.strictEqual(noRead._tag, "MissingScope")
      const canceled = yield* asker.client.interactions.cancel({ params: { id: interaction.id } })
      assert.strictEqual(canceled.status, "canceled")
    }))
})

