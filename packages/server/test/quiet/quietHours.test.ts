/**
 * Quiet hours over HTTP with the typed clients: the Person API's settings
 * (defaults, validation, mute and unmute, the current state); a routine push
 * during quiet hours arrives silent, or is held and summarised once when the
 * quiet ends (by a change, or by its end made due in the database); a
 * `critical` notification, an urgent prompt and a page break through; outside
 * quiet hours nothing changes.
 */
import { assert, layer } from "@effect/vitest"
import type { QuietWindow, SandboxDelivery } from "@herald/api"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { QuietGate } from "../../src/quiet/QuietGate.ts"
import { Summaries } from "../../src/quiet/Summaries.ts"
import { eventually } from "../../../../test/support/eventually.ts"
import { sentNotification } from "../../../../test/support/notifications.ts"
import { makeAgent, rawFetch, registerDevice, TestServerLayer } from "../../../../test/support/server.ts"
import { agentOf, seedTeam } from "../../../../test/support/teams.ts"
import { seedGroup } from "../oncall/pagesSupport.ts"
import type { Agent } from "../http/notificationsSupport.ts"

const every: QuietWindow["days"] = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
const hhmm = (ms: number) => new Date(ms).toISOString().slice(11, 16)
/** A daily UTC window around now (from an hour ago to two hours ahead), and one that is not (three to four hours ahead). */
const around = (): QuietWindow => ({ days: every, start: hhmm(Date.now() - 3_600_000), end: hhmm(Date.now() + 7_200_000) })
const later = (): QuietWindow => ({ days: every, start: hhmm(Date.now() + 3 * 3_600_000), end: hhmm(Date.now() + 4 * 3_600_000) })

type Aps = { readonly aps: Record<string, unknown>; readonly herald?: Record<string, unknown> }
const apsOf = (d: SandboxDelivery | undefined) => (d?.payload as Aps).aps
const titled = (items: ReadonlyArray<SandboxDelivery>, title: string) =>
  items.filter((d) => ((apsOf(d).alert as { title?: string } | undefined)?.title ?? "") === title)

const quietNow = (agent: Agent, mode: "silent" | "hold") =>
  agent.app.quietHours.put({ payload: { timeZone: "UTC", windows: [around()], mode } })

const send = (agent: Agent, title: string, priority?: "low" | "normal" | "high" | "critical") =>
  sentNotification(agent.client.notifications.create({
    payload: { title, body: `${title} body`, ...(priority !== undefined ? { priority } : {}) }
  }))

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("quiet hours", (it) => {
  it.effect("a person who never set them reads the defaults; bad settings answer 400 VALIDATION_FAILED", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["notifications:send"])
      const initial = yield* agent.app.quietHours.get()
      assert.deepStrictEqual(
        { ...initial, current: { ...initial.current } },
        {
          enabled: false,
          timeZone: "UTC",
          windows: [],
          mode: "silent",
          mutedUntil: null,
          current: { quiet: false, reason: null, until: null, held: 0 }
        }
      )
      const put = (body: unknown) =>
        rawFetch("/api/app/me/quiet-hours", {
          method: "PUT",
          headers: { authorization: `Bearer ${agent.session}`, "content-type": "application/json" },
          body: JSON.stringify(body)
        })
      const zone = yield* put({ timeZone: "Mars/Olympus_Mons", windows: [], mode: "hold" })
      assert.strictEqual(zone.status, 400)
      assert.strictEqual((zone.body as { code: string }).code, "VALIDATION_FAILED")
      assert.deepStrictEqual((zone.body as { issues: Array<{ path: string }> }).issues.map((i) => i.path), ["timeZone"])
      const offset = yield* put({ timeZone: "+05:30", windows: [], mode: "hold" })
      assert.strictEqual(offset.status, 400)
      const hour = yield* put({ timeZone: "UTC", windows: [{ days: ["mon"], start: "25:00", end: "07:00" }], mode: "hold" })
      assert.strictEqual(hour.status, 400)
      assert.strictEqual((hour.body as { code: string }).code, "VALIDATION_FAILED")
      const allWeek = yield* put({ timeZone: "UTC", windows: [{ days: every, start: "00:00", end: "24:00" }], mode: "hold" })
      assert.strictEqual(allWeek.status, 400)
      assert.deepStrictEqual((allWeek.body as { issues: Array<{ path: string }> }).issues.map((i) => i.path), ["windows"])
      const tooMany = yield* put({ timeZone: "UTC", windows: Array.from({ length: 15 }, () => later()), mode: "hold" })
      assert.strictEqual(tooMany.status, 400)
      const mode = yield* put({ timeZone: "UTC", windows: [], mode: "loud" })
      assert.strictEqual(mode.status, 400)
      const mute = yield* rawFetch("/api/app/me/quiet-hours/mute", {
        method: "POST",
        headers: { authorization: `Bearer ${agent.session}`, "content-type": "application/json" },
        body: JSON.stringify({ hours: 169 })
      })
      assert.strictEqual(mute.status, 400)
      // Nothing was stored by the refusals.
      assert.isFalse((yield* agent.app.quietHours.get()).enabled)
    }))

  it.effect("silent: a routine push arrives without sound at the passive level; a critical one as usual", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["notifications:send"])
      const phone = yield* registerDevice(agent, "iphone-")
      const pixel = yield* registerDevice(agent, "pixel-", "android")
      const settings = yield* quietNow(agent, "silent")
      assert.isTrue(settings.enabled)
      assert.strictEqual(settings.current.quiet, true)
      assert.strictEqual(settings.current.reason, "schedule")
      assert.isAbove(Date.parse(settings.current.until!), Date.now() + 3_600_000)

      const routine = yield* send(agent, "Nightly backup done")
      assert.strictEqual(routine.accepted, 2)
      const urgent = yield* send(agent, "Database down", "critical")
      assert.strictEqual(urgent.accepted, 2)
      assert.strictEqual(urgent.notification.priority, "critical")
      assert.isUndefined(routine.notification.priority)

      const iosItems = (yield* agent.app.devices.deliveries({ params: { id: phone.id } })).items
      const [quiet] = titled(iosItems, "Nightly backup done")
      assert.isUndefined(apsOf(quiet).sound)
      assert.strictEqual(apsOf(quiet)["interruption-level"], "passive")
      const [loud] = titled(iosItems, "Database down")
      assert.strictEqual(apsOf(loud).sound, "default")
      assert.isUndefined(apsOf(loud)["interruption-level"])

      const android = (yield* agent.app.devices.deliveries({ params: { id: pixel.id } })).items
      const payloads = android.map((d) => d.payload as { notification?: { title: string }; android?: { priority: string; notification?: unknown }; data?: Record<string, string> })
      const quietAndroid = payloads.find((p) => p.notification?.title === "Nightly backup done")!
      assert.strictEqual(quietAndroid.android?.priority, "normal")
      assert.deepStrictEqual(quietAndroid.android?.notification, { priority: "low" })
      assert.strictEqual(quietAndroid.data?.interruptionLevel, "passive")
      const loudAndroid = payloads.find((p) => p.notification?.title === "Database down")!
      assert.strictEqual(loudAndroid.android?.priority, "high")
      assert.isUndefined(loudAndroid.data?.interruptionLevel)
    }))

  it.effect("hold: routine pushes are held; an urgent prompt and a page break through; the end summarises once", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["notifications:send", "interactions:create", "inbox:write"])
      const phone = yield* registerDevice(agent, "iphone-")
      yield* quietNow(agent, "hold")

      const first = yield* send(agent, "Build 41 passed")
      assert.strictEqual(first.accepted, 0)
      assert.strictEqual(first.message, "Saved to the inbox; held for the person's quiet hours (summarised when they end).")
      yield* send(agent, "Build 42 passed", "high")
      yield* send(agent, "Build 43 passed", "low")
      const routinePrompt = yield* agent.client.interactions.create({
        payload: { kind: "approval", title: "Rotate the logs?", prompt: "Routine." }
      })
      assert.strictEqual(routinePrompt.accepted, 0)
      assert.strictEqual(
        routinePrompt.message,
        "Pending. Accepted by 0 of 1 device. 1 held for the person's quiet hours (send urgent: true to break through). " +
          "Use GET /interactions/{id}/wait for the answer."
      )
      assert.isFalse(routinePrompt.interaction.urgent)
      const urgentPrompt = yield* agent.client.interactions.create({
        payload: { kind: "approval", title: "Deploy the hotfix?", prompt: "Production is down.", urgent: true }
      })
      assert.isTrue(urgentPrompt.interaction.urgent)
      assert.strictEqual(urgentPrompt.accepted, 1)

      // A page of an on-call group the person is on.
      const owner = { person: agent.person, session: agent.session }
      const { teamId } = yield* seedTeam({ owner })
      const groupId = yield* seedGroup(teamId, [owner])
      const pager = yield* agentOf(owner, ["oncall:write"])
      const page = yield* pager.pages.create({ params: { groupId }, payload: { title: "Disk full" } })

      const sent = yield* eventually(
        Effect.map(agent.app.devices.deliveries({ params: { id: phone.id } }), (d) => d.items),
        (items) => titled(items, "Disk full").length === 1 && titled(items, "Deploy the hotfix?").length === 1
      )
      assert.strictEqual(apsOf(titled(sent, "Deploy the hotfix?")[0]).sound, "default")
      assert.strictEqual(apsOf(titled(sent, "Disk full")[0])["interruption-level"], "time-sensitive")
      for (const title of ["Build 41 passed", "Build 42 passed", "Build 43 passed", "Rotate the logs?"]) {
        assert.lengthOf(titled(sent, title), 0, title)
      }
      assert.strictEqual((yield* agent.app.quietHours.get()).current.held, 4)
      assert.isDefined(page.page.id)

      // The person reads one held item: it leaves the summary.
      yield* agent.client.inbox.read({ params: { id: `notification:${first.notification.id}` } })

      // The quiet ends: the schedule no longer covers now.
      const after = yield* agent.app.quietHours.put({ payload: { timeZone: "UTC", windows: [later()], mode: "hold" } })
      assert.isFalse(after.current.quiet)
      const withSummary = yield* eventually(
        Effect.map(agent.app.devices.deliveries({ params: { id: phone.id } }), (d) => d.items),
        (items) => titled(items, "3 notifications during quiet hours").length === 1
      )
      const summary = titled(withSummary, "3 notifications during quiet hours")[0]!
      const alert = apsOf(summary).alert as { body: string }
      assert.strictEqual(alert.body, "Build 42 passed · Build 43 passed · Rotate the logs?")
      assert.strictEqual((summary.payload as Aps).herald?.ref, "inbox")
      assert.strictEqual((yield* agent.app.quietHours.get()).current.held, 0)

      // Once: another pass finds nothing, and no further summary arrives.
      const summaries = yield* Summaries
      assert.strictEqual(yield* summaries.pass, 0)
      const final = (yield* agent.app.devices.deliveries({ params: { id: phone.id } })).items
      assert.lengthOf(final.filter((d) => ((apsOf(d).alert as { title?: string }).title ?? "").includes("quiet hours")), 1)
    }))

  it.effect("mute and unmute: a mute is quiet whatever the schedule; unmuting summarises what it held", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["notifications:send"])
      const phone = yield* registerDevice(agent, "iphone-")
      yield* agent.app.quietHours.put({ payload: { timeZone: "Europe/Berlin", windows: [later()], mode: "hold", enabled: false } })
      const muted = yield* agent.app.quietHours.mute({ payload: { hours: 2 } })
      assert.strictEqual(muted.current.quiet, true)
      assert.strictEqual(muted.current.reason, "mute")
      assert.strictEqual(muted.mutedUntil, muted.current.until)
      assert.approximately(Date.parse(muted.mutedUntil!), Date.now() + 7_200_000, 60_000)

      const held = yield* send(agent, "Newsletter")
      assert.strictEqual(held.accepted, 0)
      assert.strictEqual((yield* agent.app.quietHours.get()).current.held, 1)

      const unmuted = yield* agent.app.quietHours.unmute()
      assert.deepStrictEqual([unmuted.mutedUntil, unmuted.current.quiet, unmuted.current.reason], [null, false, null])
      const items = yield* eventually(
        Effect.map(agent.app.devices.deliveries({ params: { id: phone.id } }), (d) => d.items),
        (items) => titled(items, "1 notification during quiet hours").length === 1
      )
      assert.strictEqual((apsOf(titled(items, "1 notification during quiet hours")[0]).alert as { body: string }).body, "Newsletter")

      // Not quiet any more: pushes go as usual.
      const normal = yield* send(agent, "Weekly report")
      assert.strictEqual(normal.accepted, 1)
      assert.strictEqual(apsOf(titled((yield* agent.app.devices.deliveries({ params: { id: phone.id } })).items, "Weekly report")[0]).sound, "default")
    }))

  it.effect("a mute's end made due in the database: the next pass sends the summary, exactly once", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const agent = yield* makeAgent(["notifications:send"])
      const phone = yield* registerDevice(agent, "iphone-")
      yield* agent.app.quietHours.put({ payload: { timeZone: "UTC", windows: [], mode: "hold" } })
      yield* agent.app.quietHours.mute({ payload: { hours: 1 } })
      yield* send(agent, "Cron job ran")
      // An hour passes: the mute ended, the held item is due.
      yield* sql`UPDATE quiet_hours SET muted_until = now() - interval '1 second' WHERE user_id = ${agent.person.id}`
      yield* sql`UPDATE quiet_held SET release_at = now() - interval '1 second' WHERE user_id = ${agent.person.id}`
      yield* (yield* QuietGate).refresh(agent.person.id)
      const summaries = yield* Summaries
      // Two passes at once, and the worker perhaps first: between them, one summary.
      const queued = yield* Effect.all([summaries.pass, summaries.pass], { concurrency: 2 })
      assert.isAtMost(queued[0] + queued[1], 1)
      const items = yield* eventually(
        Effect.map(agent.app.devices.deliveries({ params: { id: phone.id } }), (d) => d.items),
        (items) => titled(items, "1 notification during quiet hours").length >= 1
      )
      assert.lengthOf(titled(items, "1 notification during quiet hours"), 1)
      const held = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM quiet_held WHERE user_id = ${agent.person.id}`
      assert.strictEqual(held[0]!.n, 0)
    }))

  it.effect("outside quiet hours nothing changes, in either mode", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["notifications:send"])
      const phone = yield* registerDevice(agent, "iphone-")
      const settings = yield* agent.app.quietHours.put({ payload: { timeZone: "UTC", windows: [later()], mode: "hold" } })
      assert.deepStrictEqual({ ...settings.current }, { quiet: false, reason: null, until: null, held: 0 })
      const sent = yield* send(agent, "Tests passed")
      assert.strictEqual(sent.accepted, 1)
      assert.strictEqual(sent.message, "Accepted by 1 of 1 device.")
      const [delivery] = (yield* agent.app.devices.deliveries({ params: { id: phone.id } })).items
      assert.strictEqual(apsOf(delivery).sound, "default")
      assert.isUndefined(apsOf(delivery)["interruption-level"])
    }))
})
