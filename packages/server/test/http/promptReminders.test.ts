/**
 * Reminders over HTTP with the typed client: while a prompt is pending its
 * alert is pushed again to the person's phone — same collapse id, marked with
 * its number — each time its stored `Remind` timer is made due (as the passage
 * of `everySeconds` would), at most `times` times and never at or after the
 * expiry; an answer stops them at once. A reminder delivered twice (here: run
 * twice at once, and again after it ran) pushes once. A prompt without
 * `remind` takes the person's default (`GET/PUT /me/reminders`); `remind: null`
 * turns it off. And a start re-sends a reminder timer lost between two
 * reminders.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { promptAlert } from "../../src/interactions/PromptAlert.ts"
import { Reminders } from "../../src/interactions/Reminders.ts"
import { TestSqlLayer } from "../../../../test/support/database.ts"
import { eventually } from "../../../../test/support/eventually.ts"
import { reminderDueNow, serviceOnDatabase, waitingReminders } from "../../../../test/support/prompts.ts"
import { agentClient, makeAgent, rawFetch, registerDevice, TestServerLayer } from "../../../../test/support/server.ts"

type Agent = Effect.Success<ReturnType<typeof makeAgent>>
type CreatePayload = Parameters<Agent["client"]["interactions"]["create"]>[0]["payload"]

const scopes = ["interactions:create", "interactions:read"] as const

const ask = (agent: Agent, payload: Partial<CreatePayload>) =>
  agent.client.interactions.create({
    payload: { kind: "approval", title: "Merge the release branch?", prompt: "CI is green.", expiresInSeconds: 3600, ...payload }
  })

interface Alert {
  readonly aps?: { readonly alert?: { readonly title: string } }
  readonly herald: { readonly interactionId?: string; readonly reminder?: string; readonly withdraw?: string }
}

/** What the phone got for this prompt: `alert` (the original), `reminder n`, or `withdraw`. */
const pushesOf = (agent: Agent, deviceId: string, id: string) =>
  Effect.map(agent.app.devices.deliveries({ params: { id: deviceId } }), (r) =>
    r.items.map((d) => d.payload as unknown as Alert).flatMap((p) =>
      p.herald.withdraw === id
        ? ["withdraw"]
        : p.herald.interactionId === id
        ? [p.herald.reminder === undefined ? "alert" : `reminder ${p.herald.reminder}`]
        : []
    ))

const read = (agent: Agent, id: string) => agent.client.interactions.get({ params: { id } })

/** The alert pushes queued for the prompt (original and reminders), whatever became of them: the durable record. */
const alertReceipts = (id: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ n: number }>`
      SELECT count(*)::int AS n FROM push_receipts WHERE origin = 'interaction' AND item_id = ${id} AND purpose = 'alert'`).pipe(
    Effect.map((rows) => rows[0]!.n),
    Effect.orDie
  )

/** Reminder timers of the prompt that have run (their handler finished). */
const ranReminders = (id: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ n: number }>`
      SELECT count(*)::int AS n FROM cluster_messages
      WHERE entity_type = 'Prompt' AND entity_id = ${id} AND tag = 'Remind' AND processed`).pipe(
    Effect.map((rows) => rows[0]!.n),
    Effect.orDie
  )

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("reminders", (it) => {
  it.effect("pushed again each time its timer is due, `times` times, with the alert's collapse id; then no timer is left", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      const phone = yield* registerDevice(agent, "remind-")
      const created = (yield* ask(agent, { remind: { everySeconds: 60, times: 2 } })).interaction
      assert.deepStrictEqual([created.remind, created.remindersSent], [{ everySeconds: 60, times: 2 }, 0])
      assert.deepStrictEqual(yield* waitingReminders(created.id), ["remind:1"])
      assert.deepStrictEqual(yield* pushesOf(agent, phone.id, created.id), ["alert"])

      assert.strictEqual(yield* reminderDueNow(created.id), 1)
      yield* eventually(pushesOf(agent, phone.id, created.id), (p) => p.length === 2)
      assert.deepStrictEqual(yield* pushesOf(agent, phone.id, created.id), ["alert", "reminder 1"])
      assert.strictEqual((yield* read(agent, created.id)).remindersSent, 1)
      // The next one is stored by the one before it.
      yield* eventually(waitingReminders(created.id), (keys) => keys.length === 1)
      assert.deepStrictEqual(yield* waitingReminders(created.id), ["remind:2"])

      assert.strictEqual(yield* reminderDueNow(created.id), 1)
      yield* eventually(pushesOf(agent, phone.id, created.id), (p) => p.length === 3)
      assert.deepStrictEqual(yield* pushesOf(agent, phone.id, created.id), ["alert", "reminder 1", "reminder 2"])
      const after = yield* read(agent, created.id)
      assert.deepStrictEqual([after.status, after.remindersSent], ["pending", 2])
      assert.deepStrictEqual(yield* waitingReminders(created.id), [], "times reached: no third timer")

      // Same collapse id as the original: the phone replaces the alert rather than adding one.
      const content = { ...created, projectId: null }
      assert.strictEqual(promptAlert(content, 2).collapseId, promptAlert(content).collapseId)
      assert.strictEqual(promptAlert(content, 2).collapseId, created.id)
    }))

  it.effect("a reminder delivered twice, at once and again later, pushes once; a stale number pushes nothing", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      const phone = yield* registerDevice(agent, "twice-")
      const reminders = yield* Reminders
      const created = (yield* ask(agent, { remind: { everySeconds: 60, times: 3 } })).interaction
      yield* Effect.all([reminders.send(created.id, 1), reminders.send(created.id, 1)], { concurrency: "unbounded" })
      yield* reminders.send(created.id, 1)
      // Reminder 3 before reminder 2 (a stale or early timer): the counter is at 1, so it claims nothing.
      yield* reminders.send(created.id, 3)
      // Each send returned after its commit: the queued pushes are all there is.
      assert.strictEqual(yield* alertReceipts(created.id), 2)
      yield* eventually(pushesOf(agent, phone.id, created.id), (p) => p.length >= 2)
      assert.deepStrictEqual(yield* pushesOf(agent, phone.id, created.id), ["alert", "reminder 1"])
      assert.strictEqual((yield* read(agent, created.id)).remindersSent, 1)
    }))

  it.effect("an answer stops them at once: a due timer afterwards pushes nothing, only the alert's removal comes", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      const phone = yield* registerDevice(agent, "stop-")
      const created = (yield* ask(agent, { remind: { everySeconds: 60, times: 5 } })).interaction
      yield* agent.app.interactions.answer({ params: { id: created.id }, payload: { status: "approved", deviceId: phone.id } })
      assert.strictEqual(yield* reminderDueNow(created.id), 1)
      yield* eventually(ranReminders(created.id), (n) => n === 1)
      assert.strictEqual(yield* alertReceipts(created.id), 1, "the original alert only")
      yield* eventually(pushesOf(agent, phone.id, created.id), (p) => p.includes("withdraw"))
      assert.deepStrictEqual(yield* pushesOf(agent, phone.id, created.id), ["alert", "withdraw"])
      assert.deepStrictEqual([(yield* read(agent, created.id)).remindersSent], [0])
      assert.deepStrictEqual(yield* waitingReminders(created.id), [], "no next timer after the answer")
    }))

  it.effect("never at or after the expiry: a two-minute prompt reminded every minute gets one reminder", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      const phone = yield* registerDevice(agent, "short-")
      const created = (yield* ask(agent, { expiresInSeconds: 120, remind: { everySeconds: 60, times: 10 } })).interaction
      assert.strictEqual(yield* reminderDueNow(created.id), 1)
      yield* eventually(ranReminders(created.id), (n) => n === 1)
      assert.deepStrictEqual(yield* waitingReminders(created.id), [], "reminder 2 would be due at the expiry")
      assert.strictEqual(yield* alertReceipts(created.id), 2)
      yield* eventually(pushesOf(agent, phone.id, created.id), (p) => p.length === 2)
      assert.deepStrictEqual(yield* pushesOf(agent, phone.id, created.id), ["alert", "reminder 1"])
    }))

  it.effect("the person's default applies to prompts without remind; null turns it off; GET/PUT /me/reminders and their bounds", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      assert.isNull((yield* agent.app.reminders.get()).remind)
      assert.isNull((yield* ask(agent, {})).interaction.remind, "no default: no reminders")

      const set = yield* agent.app.reminders.put({ payload: { remind: { everySeconds: 900, times: 3 } } })
      assert.deepStrictEqual(set.remind, { everySeconds: 900, times: 3 })
      assert.deepStrictEqual((yield* agent.app.reminders.get()).remind, { everySeconds: 900, times: 3 })
      const defaulted = (yield* ask(agent, {})).interaction
      assert.deepStrictEqual(defaulted.remind, { everySeconds: 900, times: 3 })
      assert.deepStrictEqual(yield* waitingReminders(defaulted.id), ["remind:1"])
      const own = (yield* ask(agent, { remind: { everySeconds: 120, times: 1 } })).interaction
      assert.deepStrictEqual(own.remind, { everySeconds: 120, times: 1 })
      const off = (yield* ask(agent, { remind: null })).interaction
      assert.isNull(off.remind)
      assert.deepStrictEqual(yield* waitingReminders(off.id), [])

      assert.isNull((yield* agent.app.reminders.put({ payload: { remind: null } })).remind)
      assert.isNull((yield* ask(agent, {})).interaction.remind)

      // Out of bounds (the typed client would not send these): 400 VALIDATION_FAILED naming the field.
      for (const [remind, field] of [[{ everySeconds: 59, times: 1 }, "everySeconds"], [{ everySeconds: 60, times: 11 }, "times"]] as const) {
        for (const [path, auth] of [["/api/app/me/reminders", agent.session], ["/api/agent/interactions", agent.secret]] as const) {
          const body = path.endsWith("reminders") ? { remind } : { kind: "approval", title: "Q", prompt: "Q", remind }
          const refused = yield* rawFetch(path, {
            method: path.endsWith("reminders") ? "PUT" : "POST",
            headers: { authorization: `Bearer ${auth}`, "content-type": "application/json" },
            body: JSON.stringify(body)
          })
          assert.strictEqual(refused.status, 400, `${path} ${field}`)
          assert.strictEqual((refused.body as { code: string }).code, "VALIDATION_FAILED")
          assert.include(JSON.stringify(refused.body), field)
        }
      }
    }))
})

layer(TestSqlLayer, { excludeTestServices: true, timeout: "60 seconds" })("reminder timers at start", (it) => {
  it.effect("a pending prompt whose next reminder timer was lost gets it back when the service starts", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const { id, secret } = yield* Effect.scoped(Effect.gen(function*() {
        const agent = yield* makeAgent([...scopes])
        const created = yield* ask(agent, { remind: { everySeconds: 300, times: 2 } })
        return { id: created.interaction.id, secret: agent.secret }
      }).pipe(Effect.provide(serviceOnDatabase())))
      // As if the process died after reminder 1 was counted and before it stored the timer of reminder 2.
      yield* sql`DELETE FROM cluster_messages WHERE entity_type = 'Prompt' AND entity_id = ${id} AND tag = 'Remind'`
      yield* sql`UPDATE interactions SET reminders_sent = 1 WHERE id = ${id}`

      const keys = yield* Effect.scoped(Effect.gen(function*() {
        const client = yield* agentClient(secret)
        assert.strictEqual((yield* client.interactions.get({ params: { id } })).remindersSent, 1)
        return yield* eventually(waitingReminders(id), (k) => k.length === 1)
      }).pipe(Effect.provide(serviceOnDatabase())))
      assert.deepStrictEqual(keys, ["remind:2"])
      const due = yield* sql<{ deliverAt: string; createdAt: Date }>`
        SELECT m.deliver_at::text AS deliver_at, i.created_at FROM cluster_messages m JOIN interactions i ON i.id = m.entity_id
        WHERE m.entity_type = 'Prompt' AND m.entity_id = ${id} AND m.tag = 'Remind'`
      assert.strictEqual(Number(due[0]!.deliverAt), new Date(due[0]!.createdAt).getTime() + 600_000, "due 2 × everySeconds after creation")
    }))
})
