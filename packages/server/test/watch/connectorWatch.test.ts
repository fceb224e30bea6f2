/**
 * A tunnel connector's heartbeat watch over HTTP with the typed client, on
 * the real cluster: after `alertAfterSeconds` without a heartbeat its owner
 * gets one push (its stored `Check` timer made due: "time passes"), a timer
 * run again sends none more, the next heartbeat one "back online"; heartbeats
 * in time alert nobody; the setting is bounded and shown on the record.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { Deadline } from "../../src/cluster/Deadline.ts"
import { WatchAlerts } from "../../src/watch/WatchAlerts.ts"
import { eventually } from "../../../../test/support/eventually.ts"
import { makeAgent, rawFetch, registerDevice, TestServerLayer } from "../../../../test/support/server.ts"
import { connectorBody } from "../connectors/support.ts"
import { allProcessed, timersComeDue, watchTimers } from "./watchSupport.ts"

const scopes = ["connectors:read", "connectors:write"] as const

/** A connector watched for `seconds` of a new agent with one phone, and the watch pushes on that phone. */
const watchedConnector = (seconds: number) =>
  Effect.gen(function*() {
    const agent = yield* makeAgent([...scopes])
    const phone = yield* registerDevice(agent, "conn-watch-")
    const { connector } = yield* agent.client.connectors.create({ payload: connectorBody({ alertAfterSeconds: seconds }) })
    const pushes = Effect.map(agent.app.devices.deliveries({ params: { id: phone.id } }), (r) =>
      r.items.filter((d) => (d.payload as { herald?: { ref?: string } }).herald?.ref === `connector:${connector.id}`)
        .map((d) => (d.payload as { aps: { alert: { body: string } } }).aps.alert.body))
    return { agent, connector, pushes }
  })

/** The connector's last heartbeat and its watch's start both moved `seconds` back; its timers come due. */
const quietFor = (connectorId: string, seconds: number) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`UPDATE connector_watches SET started_at = started_at - make_interval(secs => ${seconds}) WHERE connector_id = ${connectorId}`
    yield* sql`UPDATE connectors SET last_seen_at = last_seen_at - make_interval(secs => ${seconds}) WHERE id = ${connectorId}`
    yield* timersComeDue(connectorId)
  }).pipe(Effect.orDie)

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("connector heartbeat watch", (it) => {
  it.effect("missed heartbeats: one push to the owner, none more; the next heartbeat: one back-online notice", () =>
    Effect.gen(function*() {
      const { agent, connector, pushes } = yield* watchedConnector(300)
      assert.strictEqual(connector.alertAfterSeconds, 300)
      assert.isNull(connector.silentSince)
      yield* agent.client.connectors.heartbeat({ params: { id: connector.id } })

      yield* quietFor(connector.id, 3600)
      const alerted = yield* eventually(pushes, (p) => p.length === 1)
      assert.match(alerted[0]!, /^Connector Home lab has missed its heartbeats since \d{4}-\d\d-\d\d \d\d:\d\d UTC$/)
      const silent = yield* agent.client.connectors.get({ params: { id: connector.id } })
      assert.isNotNull(silent.silentSince)
      assert.isFalse(silent.online)

      // The timer delivered again, twice at once: already silent, nothing more.
      const alerts = yield* WatchAlerts
      yield* Effect.all([alerts.checkConnector(connector.id, Deadline.at(0, "check:0")), alerts.checkConnector(connector.id, Deadline.at(0, "check:0"))], { concurrency: 2 })
      yield* eventually(watchTimers(connector.id), allProcessed)
      assert.lengthOf(yield* pushes, 1)

      // Back: one notice, and the watch is armed for the heartbeat + alertAfterSeconds.
      const beat = yield* agent.client.connectors.heartbeat({ params: { id: connector.id } })
      const back = yield* eventually(pushes, (p) => p.length === 2)
      assert.strictEqual(back[1], "Connector Home lab is back online")
      const next = Date.parse(beat.lastSeenAt!) + 300_000
      yield* eventually(watchTimers(connector.id), (t) => t.get(`check:${next}`)?.processed === false)
      assert.isNull((yield* agent.client.connectors.get({ params: { id: connector.id } })).silentSince)
      yield* agent.client.connectors.heartbeat({ params: { id: connector.id } })
      yield* alerts.checkConnector(connector.id, Deadline.at(Date.now(), `resume:${Date.parse(silent.silentSince!)}`))
      assert.lengthOf(yield* pushes, 2)
    }))

  it.effect("heartbeats in time: the timer re-arms and alerts nobody; null turns the watch off", () =>
    Effect.gen(function*() {
      const { agent, connector, pushes } = yield* watchedConnector(60)
      const beat = yield* agent.client.connectors.heartbeat({ params: { id: connector.id } })
      const next = Date.parse(beat.lastSeenAt!) + 60_000
      yield* timersComeDue(connector.id)
      yield* eventually(watchTimers(connector.id), (t) => t.get(`check:${next}`)?.processed === false)
      assert.lengthOf(yield* pushes, 0)

      const off = yield* agent.client.connectors.update({ params: { id: connector.id }, payload: { alertAfterSeconds: null } })
      assert.isNull(off.alertAfterSeconds)
      yield* timersComeDue(connector.id)
      yield* eventually(watchTimers(connector.id), allProcessed)
      assert.lengthOf(yield* pushes, 0)
      // The list shows the setting too.
      const listed = yield* agent.client.connectors.list()
      assert.isNull(listed.items.find((c) => c.id === connector.id)?.alertAfterSeconds)
    }))

  it.effect("alertAfterSeconds outside 60–604,800 is 400 VALIDATION_FAILED", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      for (const alertAfterSeconds of [59, 604_801, 90.5]) {
        const refused = yield* rawFetch("/api/agent/connectors", {
          method: "POST",
          headers: { authorization: `Bearer ${agent.secret}`, "content-type": "application/json" },
          body: JSON.stringify({ ...connectorBody(), alertAfterSeconds })
        })
        assert.strictEqual(refused.status, 400, String(alertAfterSeconds))
        assert.strictEqual((refused.body as { code: string }).code, "VALIDATION_FAILED")
      }
    }))
})
