/**
 * A prompt's reminders survive crashes of a real `herald serve`: the server is
 * killed (SIGKILL) around each reminder and started again on the same
 * database; every reminder reaches the phone exactly once.
 *
 * A prompt reminded every minute, three times. Its stored `Remind` timers are
 * made due by the test (as the passage of a minute would), one at a time:
 *
 * 1. Reminder 1 fires on a server whose pushes are paused
 *    (`HERALD_PUSH_PAUSED=true`): killed the moment it is counted, before its
 *    push left. The next server sends it, once.
 * 2. Reminder 2 is made due and the server killed the moment its push
 *    reached the phone (its timer's end perhaps unrecorded: it is delivered
 *    again at the start and must push nothing).
 * 3. Reminder 3 is made due while no server runs; the next one fires it at
 *    start.
 *
 * Then the person answers: reminders stop and the alert's removal is the last
 * push. The phone holds the alert, reminders 1, 2 and 3 once each, and the
 * removal — nothing lost, nothing repeated — and no reminder timer is left.
 * The paused first server pins the kill between the count and the push
 * without racing the sender (as in pageEscalation.test.ts). No kill lands
 * between the outbox's claim of a push and its provider call: a push claimed
 * by a dead process is never sent again (push/Outbox.ts, at most once to the
 * provider), which is the outbox's rule, not the reminders'.
 */
import { assert, it } from "@effect/vitest"
import type { Interaction } from "@herald/api"
import { Effect } from "effect"
import { childDatabase } from "../support/database.ts"
import { startServer } from "../support/process.ts"
import type { ServerProcess } from "../support/process.ts"
import { agentClient, onDatabaseOf, personClient, personOn, within } from "../support/serverClients.ts"
import { reminderDueNow, waitingReminders } from "../support/prompts.ts"



interface Alert {
  readonly herald: { readonly interactionId?: string; readonly reminder?: string; readonly withdraw?: string }
}

it.live("reminders across kill -9: each reaches the phone once, none lost, none repeated", () =>
  Effect.scoped(Effect.gen(function*() {
    const database = (yield* childDatabase).env
    // The test's own connection to the servers' database: to make the stored timers due.
    const onDatabase = onDatabaseOf(database)

    const first = yield* startServer({ ...database, HERALD_PUSH_PAUSED: "true" })
    const { session } = yield* personOn(database, { email: "remind@example.test", name: "Rem" })
    const app = (baseUrl: string) => personClient(baseUrl, session)
    const device = yield* (yield* app(first.baseUrl)).devices.register({
      payload: { platform: "ios", deviceName: "phone", pushToken: `remind-${Date.now()}` }
    })
    const { secret } = yield* (yield* app(first.baseUrl)).tokens.create({
      payload: { name: "reminder", scopes: ["interactions:create", "interactions:read"] }
    })
    const created = yield* (yield* agentClient(first.baseUrl, secret)).interactions.create({
      payload: { kind: "approval", title: "Restart the primary?", prompt: "Failover drill.", remind: { everySeconds: 60, times: 3 } }
    })
    const id = created.interaction.id

    const read = (server: ServerProcess) =>
      Effect.flatMap(agentClient(server.baseUrl, secret), (agent) => agent.interactions.get({ params: { id } }))
    const pushes = (server: ServerProcess) =>
      Effect.flatMap(app(server.baseUrl), (a) => a.devices.deliveries({ params: { id: device.id } })).pipe(
        Effect.map((r) =>
          r.items.map((d) => (d.payload as unknown as Alert).herald).flatMap((h) =>
            h.withdraw === id ? ["withdraw"] : h.interactionId === id ? [h.reminder === undefined ? "alert" : `reminder ${h.reminder}`] : []
          )
        )
      )
    const sent = (n: number) => (i: Interaction) => i.remindersSent >= n
    /** Makes reminder `n`'s stored timer due (on a running server, once the one before it stored it). */
    const dueNow = (n: number) =>
      Effect.gen(function*() {
        yield* within(30, onDatabase(waitingReminders(id)), (keys) => keys.includes(`remind:${n}`), `timer of reminder ${n}`)
        assert.strictEqual(yield* onDatabase(reminderDueNow(id, `remind:${n}`)), 1)
      })

    // 1. Counted, its push held (paused), then killed.
    yield* dueNow(1)
    yield* within(30, read(first), sent(1), "reminder 1 counted")
    yield* first.kill

    // The queued pushes (the alert and reminder 1) leave from the next server, once.
    const second = yield* startServer(database)
    yield* within(30, pushes(second), (p) => p.includes("reminder 1"), "reminder 1 at the phone after the restart")

    // 2. Its push at the phone and the next timer stored, then killed.
    yield* dueNow(2)
    yield* within(30, pushes(second), (p) => p.includes("reminder 2"), "reminder 2 at the phone")
    yield* within(30, onDatabase(waitingReminders(id)), (keys) => keys.includes("remind:3"), "timer of reminder 3")
    yield* second.kill

    // 3. Due while no server runs: the next one fires it as it starts. (Reminder 2's timer may wait too, its
    // end unrecorded by the killed server: redelivered at the start, it finds its count taken and pushes nothing.)
    assert.strictEqual(yield* onDatabase(reminderDueNow(id, "remind:3")), 1)
    const third = yield* startServer(database)
    yield* within(30, pushes(third), (p) => p.includes("reminder 2") && p.includes("reminder 3"), "reminders 2 and 3 at the phone")
    const done = yield* read(third)
    assert.deepStrictEqual([done.status, done.remindersSent], ["pending", 3])
    assert.deepStrictEqual(yield* onDatabase(waitingReminders(id)), [], "times reached: no timer left")

    // The answer stops it all; its removal command, queued after every reminder push, is the barrier.
    yield* (yield* app(third.baseUrl)).interactions.answer({ params: { id }, payload: { status: "approved", deviceId: device.id } })
    const all = yield* within(30, pushes(third), (p) => p.includes("withdraw"), "the alert's removal")
    // The alert and reminder 1 left together (from the same queue): their order is the sender's.
    assert.strictEqual(all.at(-1), "withdraw")
    assert.deepStrictEqual([...all].sort(), ["alert", "reminder 1", "reminder 2", "reminder 3", "withdraw"], "each once")
  })), { timeout: 240_000 })
