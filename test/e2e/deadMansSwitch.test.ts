/**
 * A webhook service's dead-man's switch survives crashes of a real
 * `herald serve`: killed (SIGKILL) while its deadline is pending, and again
 * right after the silence alert was decided, then restarted; the phone holds
 * exactly one "silent" alert, then exactly one "delivering again" notice.
 *
 * 1. A service expecting a delivery every minute (no grace) is created; the
 *    server dies with its `Check` timer stored and pending.
 * 2. While no server runs, a minute and more passes (the watch's start is
 *    moved back and its timer made due). The next server, its pushes paused
 *    (`HERALD_PUSH_PAUSED=true`), fires the timer at start: the service turns
 *    silent and its alert is queued, not sent; killed there.
 * 3. The third server sends the queued alert once (a redelivered timer finds
 *    the service already silent). A delivery then brings one resumed notice.
 *
 * The paused second server pins the kill between the decision and the push
 * without racing the sender (as in pageEscalation.test.ts).
 */
import { assert, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { childDatabase } from "../support/database.ts"
import { startServer } from "../support/process.ts"
import type { ServerProcess } from "../support/process.ts"
import { agentClient, onDatabaseOf, personClient, personOn, pushesQueued, within } from "../support/serverClients.ts"



interface Alert {
  readonly aps: { readonly alert?: { readonly body?: string } }
  readonly herald: { readonly ref?: string }
}

it.live("the dead-man's switch across kill -9: one silence alert, then one resumed notice", () =>
  Effect.scoped(Effect.gen(function*() {
    const database = (yield* childDatabase).env
    // The test's own connection to the servers' database: to let time pass for the stored timer.
    const onDatabase = onDatabaseOf(database)

    const first = yield* startServer(database)
    const { session } = yield* personOn(database, { email: "watch@example.test", name: "Wat" })
    const app = (baseUrl: string) => personClient(baseUrl, session)
    const device = yield* (yield* app(first.baseUrl)).devices.register({
      payload: { platform: "ios", deviceName: "phone", pushToken: `watch-${Date.now()}` }
    })
    const { secret } = yield* (yield* app(first.baseUrl)).tokens.create({
      payload: { name: "watcher", scopes: ["services:read", "services:write"] }
    })
    const created = yield* (yield* agentClient(first.baseUrl, secret)).services.create({
      payload: { title: "Nightly backup", watch: { expectEverySeconds: 60, graceSeconds: 0 } }
    })
    const id = created.service.id
    const read = (server: ServerProcess) =>
      Effect.flatMap(agentClient(server.baseUrl, secret), (agent) => agent.services.get({ params: { id } }))
    const pushes = (server: ServerProcess) =>
      Effect.flatMap(app(server.baseUrl), (a) => a.devices.deliveries({ params: { id: device.id } })).pipe(
        Effect.map((r) =>
          r.items.map((d) => d.payload as unknown as Alert).filter((a) => a.herald.ref === `service:${id}`).map((a) => a.aps.alert?.body ?? "")
        )
      )
    const pending = onDatabase(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql<{ n: number }>`SELECT count(*)::int AS n FROM cluster_messages
                         WHERE entity_type = 'DeliveryWatch' AND entity_id = ${id} AND NOT processed`).pipe(
        Effect.map((rows) => rows[0]!.n),
        Effect.orDie
      ))

    // 1. Killed with the deadline stored and pending.
    assert.strictEqual(yield* pending, 1)
    yield* first.kill

    // 2. Time passes while no server runs: the watch started two minutes ago, its timer is due.
    yield* onDatabase(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      Effect.all([
        sql`UPDATE service_watches SET started_at = started_at - interval '2 minutes' WHERE service_id = ${id}`,
        sql`UPDATE cluster_messages SET deliver_at = ${Date.now()} WHERE entity_type = 'DeliveryWatch' AND entity_id = ${id}`
      ])).pipe(Effect.orDie))
    const second = yield* startServer({ ...database, HERALD_PUSH_PAUSED: "true" })
    const silent = yield* within(30, read(second), (s) => s.watch?.silentSince != null, "silent after the restart")
    assert.strictEqual(Date.parse(silent.watch!.silentSince!), Date.parse(created.service.watch!.startedAt) - 120_000)
    yield* second.kill

    // 3. The queued alert leaves once; the next delivery brings one resumed notice.
    const third = yield* startServer(database)
    yield* within(30, pushes(third), (p) => p.length >= 1, "the alert at the phone")
    const hook = yield* Effect.promise(() =>
      fetch(`${third.baseUrl}${new URL(created.webhookUrl).pathname}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ body: "backup done" })
      }))
    assert.strictEqual(hook.status, 202)
    yield* within(30, read(third), (s) => s.watch?.silentSince === null, "delivering again")
    const all = yield* within(30, pushes(third), (p) => p.length >= 2, "the resumed notice at the phone")
    // With nothing left in the push queue, a repeated push (queued before the notice) would be in too.
    yield* within(10, pushesQueued(database, [device.id]), (n) => n === 0, "no push still queued")
    const final = yield* pushes(third)
    assert.deepStrictEqual(final, all)
    assert.lengthOf(final, 2, JSON.stringify(final))
    assert.match(final[0]!, /^Nightly backup has been silent since /)
    assert.strictEqual(final[1], "Nightly backup is delivering again")
    // The watch is armed again (its next check pending), and nothing else waits.
    yield* within(10, pending, (n) => n === 1, "the next check stored")
  })), { timeout: 240_000 })
