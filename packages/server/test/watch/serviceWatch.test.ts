/**
 * The dead-man's switch of webhook services over HTTP with the typed client,
 * on the real cluster: a watched service that goes silent alerts its audience
 * once (its stored `Check` timer made due: "time passes" without sleeping), a
 * timer run again alerts nobody again, the next delivery brings one "delivering
 * again" notice, deliveries in time re-arm the timer and alert nobody, a shared
 * service alerts the family, an on-call group is paged (and the page resolved),
 * and the settings are checked.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { Deadline } from "../../src/cluster/Deadline.ts"
import { WatchAlerts } from "../../src/watch/WatchAlerts.ts"
import { WatchSettings } from "../../src/watch/WatchSettings.ts"
import { eventually } from "../../../../test/support/eventually.ts"
import { makeAgent, rawFetch, registerDevice, TestServerLayer } from "../../../../test/support/server.ts"
import { agentOf, seedRoles } from "../../../../test/support/teams.ts"
import { phoneOf, deliveries as phoneDeliveries, seedGroup } from "../oncall/pagesSupport.ts"
import { allProcessed, timePasses, timersComeDue, watchPushes, watchTimers } from "./watchSupport.ts"

const rw = ["services:read", "services:write"] as const
const HOUR = 3600

const deliver = (webhookUrl: string, body: string) =>
  rawFetch(new URL(webhookUrl).pathname, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ body }) })

/** A watched service (an hour, default grace) of a new agent with one phone. */
const watchedService = (title: string) =>
  Effect.gen(function*() {
    const agent = yield* makeAgent([...rw])
    const phone = yield* registerDevice(agent, "watch-")
    const created = yield* agent.client.services.create({ payload: { title, watch: { expectEverySeconds: HOUR } } })
    const pushes = Effect.map(agent.app.devices.deliveries({ params: { id: phone.id } }), (r) => watchPushes(r.items, created.service.id))
    return { agent, created, id: created.service.id, pushes }
  })

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("dead-man's switch", (it) => {
  it.effect("silent: one alert; a timer run again: none more; the next delivery: one resumed notice", () =>
    Effect.gen(function*() {
      const { agent, created, id, pushes } = yield* watchedService("Backups")
      assert.strictEqual(created.service.watch?.expectEverySeconds, HOUR)
      assert.strictEqual(created.service.watch?.graceSeconds, 300)
      assert.isNull(created.service.watch?.alertGroupId)
      assert.isNull(created.service.watch?.lastDeliveryAt)
      assert.isNull(created.service.watch?.silentSince)
      // Its first timer is stored at start + period + grace.
      const dueAt = Date.parse(created.service.watch!.dueAt)
      assert.strictEqual(dueAt, Date.parse(created.service.watch!.startedAt) + (HOUR + 300) * 1000)
      assert.deepStrictEqual([...(yield* watchTimers(id)).keys()], [`check:${dueAt}`])

      yield* timePasses(id, 2 * HOUR)
      const alerted = yield* eventually(pushes, (p) => p.length === 1)
      assert.match(alerted[0]!, /^Backups has been silent since \d{4}-\d\d-\d\d \d\d:\d\d UTC$/)
      const silent = yield* agent.client.services.get({ params: { id } })
      assert.isNotNull(silent.watch?.silentSince)

      // The timer delivered again, twice at once (at-least-once delivery): the watch is already silent.
      const alerts = yield* WatchAlerts
      yield* Effect.all([alerts.check(id, Deadline.at(dueAt, `check:${dueAt}`)), alerts.check(id, Deadline.at(dueAt, `check:${dueAt}`))], { concurrency: 2 })
      yield* timersComeDue(id)
      yield* eventually(watchTimers(id), allProcessed)
      assert.lengthOf(yield* pushes, 1)

      // Deliveries resume: one notice.
      assert.strictEqual((yield* deliver(created.webhookUrl, "done")).status, 202)
      const resumed = yield* eventually(pushes, (p) => p.length === 2)
      assert.strictEqual(resumed[1], "Backups is delivering again")
      const back = yield* eventually(agent.client.services.get({ params: { id } }), (s) => s.watch?.silentSince === null)
      assert.isNotNull(back.watch?.lastDeliveryAt)
      // Re-armed for the last delivery + period + grace.
      const next = Date.parse(back.watch!.lastDeliveryAt!) + (HOUR + 300) * 1000
      assert.strictEqual(Date.parse(back.watch!.dueAt), next)
      const resumeKey = `resume:${Date.parse(silent.watch!.silentSince!)}`
      const timers = yield* eventually(watchTimers(id), (t) => t.get(resumeKey)?.processed === true && t.has(`check:${next}`))
      assert.isFalse(timers.get(`check:${next}`)!.processed)
      // More deliveries, and the resume check delivered again: nothing more.
      assert.strictEqual((yield* deliver(created.webhookUrl, "done again")).status, 202)
      yield* alerts.check(id, Deadline.at(Date.now(), resumeKey))
      yield* eventually(watchTimers(id), (t) => t.get(resumeKey)?.processed === true)
      assert.lengthOf(yield* pushes, 2)
      assert.isNull((yield* agent.client.services.get({ params: { id } })).watch?.silentSince)
    }))

  it.effect("deliveries in time: the timer re-arms for the last delivery and alerts nobody", () =>
    Effect.gen(function*() {
      const { agent, created, id, pushes } = yield* watchedService("Cron")
      const first = Date.parse(created.service.watch!.dueAt)
      assert.strictEqual((yield* deliver(created.webhookUrl, "tick")).status, 202)
      const seen = yield* agent.client.services.get({ params: { id } })
      assert.isNotNull(seen.watch?.lastDeliveryAt)
      const next = Date.parse(seen.watch!.lastDeliveryAt!) + (HOUR + 300) * 1000
      // The first timer fires (before the later delivery's due time): it stores the next one.
      yield* timersComeDue(id)
      const timers = yield* eventually(watchTimers(id), (t) => t.get(`check:${first}`)?.processed === true && t.has(`check:${next}`))
      assert.strictEqual(timers.get(`check:${next}`)?.due, next)
      assert.isFalse(timers.get(`check:${next}`)!.processed)
      assert.lengthOf(yield* pushes, 0)
      assert.isNull((yield* agent.client.services.get({ params: { id } })).watch?.silentSince)
    }))

  it.effect("a service shared with a family alerts every member", () =>
    Effect.gen(function*() {
      const { member, owner, teamId } = yield* seedRoles()
      const ownerAgent = yield* agentOf(owner, [...rw])
      const phones = { owner: yield* phoneOf(owner), member: yield* phoneOf(member) }
      const { service } = yield* ownerAgent.services.create({ payload: { title: "NAS", watch: { expectEverySeconds: 600, graceSeconds: 0 } } })
      yield* ownerAgent.services.share({ params: { id: service.id }, payload: { familyId: teamId } })
      yield* timePasses(service.id, 3600)
      for (const [who, phone] of [[owner, phones.owner], [member, phones.member]] as const) {
        const got = yield* eventually(Effect.map(phoneDeliveries(who, phone), (d) => watchPushes(d, service.id)), (p) => p.length === 1)
        assert.match(got[0]!, /^NAS has been silent since /)
      }
    }))

  it.effect("with an on-call group: the silence pages it once; the next delivery resolves the page", () =>
    Effect.gen(function*() {
      const { member, owner, teamId } = yield* seedRoles()
      const groupId = yield* seedGroup(teamId, [member])
      const memberPhone = yield* phoneOf(member)
      const ownerAgent = yield* agentOf(owner, [...rw, "oncall:read"])
      const created = yield* ownerAgent.services.create({ payload: { title: "Ingest", watch: { expectEverySeconds: 60, alertGroupId: groupId } } })
      assert.strictEqual(created.service.watch?.alertGroupId, groupId)
      const sql = yield* SqlClient.SqlClient
      const pageOf = sql<{ id: string; title: string; status: string }>`
        SELECT p.id, p.title, p.status FROM pages p JOIN service_watches w ON true
        WHERE p.group_id = ${groupId} AND w.service_id = ${created.service.id}`
      yield* timePasses(created.service.id, 3600)
      const [page] = yield* eventually(pageOf, (rows) => rows.length === 1)
      assert.match(page!.title, /^Ingest has been silent since /)
      assert.strictEqual(page!.status, "triggered")
      // The on-call person's phone got the page (no watch push to the audience).
      yield* eventually(phoneDeliveries(member, memberPhone), (d) => d.some((x) => JSON.stringify(x.payload).includes(page!.id)))
      // The timer run again: still one page.
      yield* (yield* WatchAlerts).check(created.service.id, Deadline.at(Date.now(), "check:0"))
      assert.lengthOf(yield* pageOf, 1)
      // A crash between the silence and its page (page id not recorded): the start-up re-arm pages again,
      // absorbed by the open page under the silence's dedup key.
      const pageIdOf = sql<{ pageId: string | null }>`SELECT page_id FROM service_watches WHERE service_id = ${created.service.id}`
      yield* sql`UPDATE service_watches SET page_id = NULL WHERE service_id = ${created.service.id}`
      yield* (yield* WatchSettings).rearmAll
      yield* eventually(pageIdOf, (rows) => rows[0]?.pageId === page!.id)
      assert.lengthOf(yield* pageOf, 1)

      assert.strictEqual((yield* deliver(created.webhookUrl, "back")).status, 202)
      const resolved = yield* eventually(pageOf, (rows) => rows[0]?.status === "resolved")
      assert.lengthOf(resolved, 1)
    }))

  it.effect("settings: bounds are 400, a group the creator cannot page is 404, a member is 403, null turns it off", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...rw])
      // Out of bounds (the typed client refuses to send these): 400 VALIDATION_FAILED naming the field.
      for (const watch of [{ expectEverySeconds: 59 }, { expectEverySeconds: 604_801 }, { expectEverySeconds: 60.5 }, { expectEverySeconds: 60, graceSeconds: 86_401 }, { expectEverySeconds: 60, graceSeconds: -1 }, { expectEverySeconds: 60, alertGroupId: "grp_1" }]) {
        const refused = yield* rawFetch("/api/agent/services", {
          method: "POST",
          headers: { authorization: `Bearer ${agent.secret}`, "content-type": "application/json" },
          body: JSON.stringify({ title: "X", watch })
        })
        assert.strictEqual(refused.status, 400, JSON.stringify(watch))
        assert.strictEqual((refused.body as { code: string }).code, "VALIDATION_FAILED")
        assert.include(JSON.stringify(refused.body), "watch")
      }
      // Another team's group: 404, and no service was created.
      const other = yield* seedRoles()
      const foreignGroup = yield* seedGroup(other.teamId, [other.member])
      const notMine = yield* Effect.flip(agent.client.services.create({ payload: { title: "X", watch: { expectEverySeconds: 60, alertGroupId: foreignGroup } } }))
      assert.strictEqual(notMine._tag, "NotFound")
      assert.lengthOf((yield* agent.client.services.list()).items, 0)

      // The creator sets it; on a shared service the family's owner may not (403); null turns it off.
      const creator = yield* agentOf(other.member, [...rw])
      const { service } = yield* creator.services.create({ payload: { title: "Shared" } })
      assert.isNull(service.watch)
      yield* creator.services.share({ params: { id: service.id }, payload: { familyId: other.teamId } })
      const familyOwner = yield* agentOf(other.owner, [...rw])
      const refused = yield* Effect.flip(familyOwner.services.update({ params: { id: service.id }, payload: { watch: { expectEverySeconds: 60 } } }))
      assert.strictEqual(refused._tag, "Forbidden")
      const set = yield* creator.services.update({ params: { id: service.id }, payload: { watch: { expectEverySeconds: 120, graceSeconds: 0 } } })
      assert.strictEqual(set.watch?.expectEverySeconds, 120)
      assert.strictEqual(set.watch?.graceSeconds, 0)
      // The family sees the watch on the record (the list and the family owner's read too).
      assert.strictEqual((yield* familyOwner.services.get({ params: { id: service.id } })).watch?.expectEverySeconds, 120)
      assert.strictEqual((yield* creator.services.list()).items.find((s) => s.id === service.id)?.watch?.expectEverySeconds, 120)
      const off = yield* creator.services.update({ params: { id: service.id }, payload: { watch: null } })
      assert.isNull(off.watch)
      // Its stored timer finds no watch: nothing happens.
      yield* timersComeDue(service.id)
      yield* eventually(watchTimers(service.id), allProcessed)
    }))
})
