/**
 * Prompts presented as interactive live activities: the card is queued per
 * capable device and answered at once with `accepted: 0`, sent by the
 * activity's entity (push-to-start on iOS, an FCM data message on Android),
 * counted against each device's five concurrent activities — atomically under
 * concurrent starts — and ended when the prompt ends.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { eventually } from "../../../../test/support/eventually.ts"
import { moveActivityDeadline } from "../../../../test/support/prompts.ts"
import { makeAgent, TestServerLayer } from "../../../../test/support/server.ts"

type Agent = Effect.Success<ReturnType<typeof makeAgent>>

let seq = 0
const capablePhone = (agent: Agent, platform: "ios" | "android" = "ios", pushToStart = true) =>
  Effect.gen(function*() {
    const device = yield* agent.app.devices.register({
      payload: {
        platform,
        pushToken: `card-${platform}-${++seq}-${Date.now()}`,
        liveActivitiesCapable: true,
        interactiveLiveActivitiesCapable: true
      }
    })
    if (platform === "ios" && pushToStart) {
      yield* agent.app.devices.pushToStartToken({ params: { id: device.id }, payload: { token: `pts-${seq}-${Date.now()}` } })
    }
    return device
  })

const askOnCard = (agent: Agent, title = "Merge PR #42?") =>
  agent.client.interactions.create({
    payload: { kind: "approval", title, prompt: "CI is green.", presentation: "live_activity" }
  })

const cardPushes = (agent: Agent, deviceId: string) =>
  Effect.map(agent.app.devices.deliveries({ params: { id: deviceId } }), (r) => r.items.filter((d) => d.pushType === "liveactivity" || (d.payload as { data?: { type?: string } }).data?.type === "live_activity"))

const scopes = ["interactions:create", "interactions:read"] as const

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("prompt cards", (it) => {
  it.effect("needs a device that can show an interactive live activity", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      yield* agent.app.devices.register({ payload: { platform: "ios", pushToken: `plain-${Date.now()}` } })
      const refused = yield* Effect.flip(askOnCard(agent))
      assert.strictEqual(refused._tag, "InteractiveLiveActivityUnsupported")
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql`SELECT 1 FROM interactions WHERE user_id = ${agent.person.id}`
      assert.lengthOf(rows, 0)
    }))

  it.effect("answers at once with accepted 0 and queued cards; the entity starts them; reads report acceptance", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      const iphone = yield* capablePhone(agent, "ios")
      const pixel = yield* capablePhone(agent, "android")
      yield* agent.app.devices.register({ payload: { platform: "ios", pushToken: `plain-${Date.now()}` } })
      const created = yield* askOnCard(agent)
      assert.strictEqual(created.accepted, 0)
      assert.strictEqual(created.queued, 2)
      assert.match(created.liveActivityId ?? "", /^act_/)
      assert.strictEqual(created.interaction.presentation, "live_activity")

      const [start] = yield* eventually(cardPushes(agent, iphone.id), (items) => items.length === 1)
      assert.strictEqual(start?.pushType, "liveactivity")
      assert.strictEqual(start?.priority, 10)
      const aps = (start?.payload as { aps: Record<string, unknown> }).aps
      assert.strictEqual(aps.event, "start")
      assert.deepStrictEqual(aps.attributes, { activityId: created.liveActivityId })
      const state = aps["content-state"] as Record<string, unknown>
      assert.strictEqual(state.interactionId, created.interaction.id)
      assert.strictEqual(state.actionDigest, created.interaction.actionDigest)
      assert.strictEqual(state.primaryLabel, "Approve")
      const [android] = yield* eventually(cardPushes(agent, pixel.id), (items) => items.length === 1)
      const data = (android?.payload as { data: Record<string, string> }).data
      assert.strictEqual(data.event, "start")
      assert.strictEqual(data.activityId, created.liveActivityId)

      const read = yield* eventually(
        agent.client.interactions.get({ params: { id: created.interaction.id } }),
        (i) => i.accepted === 2
      )
      assert.strictEqual(read.status, "pending")

      // Answered: the card ends (Android at once; iOS once the phone registers the activity's update token).
      yield* agent.app.interactions.answer({ params: { id: created.interaction.id }, payload: { status: "approved" } })
      const ended = yield* eventually(cardPushes(agent, pixel.id), (items) => items.length === 2)
      const endData = (ended[1]?.payload as { data: Record<string, string> }).data
      assert.strictEqual(endData.event, "end")
      assert.strictEqual(JSON.parse(endData.state!).status, "approved")

      // The iPhone's end waits for an update token; at the card's deadline it is dropped, not kept for ever.
      const sql = yield* SqlClient.SqlClient
      const waiting = yield* sql<{ status: string }>`
        SELECT status FROM live_activity_operations WHERE device_id = ${iphone.id} AND op = 'end'`
      assert.deepStrictEqual(waiting.map((o) => o.status), ["queued"])
      yield* moveActivityDeadline(created.liveActivityId!, Date.now())
      yield* eventually(
        sql<{ status: string }>`SELECT status FROM live_activity_operations WHERE device_id = ${iphone.id} AND op = 'end'`,
        (rows) => rows[0]?.status === "expired"
      )
    }))

  it.effect("a prompt longer than a push can carry reaches both phones, its card text cut with …; the prompt is kept whole", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      const iphone = yield* capablePhone(agent, "ios")
      const pixel = yield* capablePhone(agent, "android")
      // 4,000 characters of several bytes each, and quotes that JSON escapes (twice in FCM's state string).
      const prompt = `Ship "v2"? ${"部署を承認しますか？\"".repeat(400)}`.slice(0, 4000)
      const title = `Deploy "${"✓".repeat(150)}"`
      const created = yield* agent.client.interactions.create({
        payload: { kind: "approval", title, prompt, presentation: "live_activity" }
      })
      assert.strictEqual(created.interaction.prompt, prompt)

      const [start] = yield* eventually(cardPushes(agent, iphone.id), (items) => items.length === 1)
      assert.isAtMost(Buffer.byteLength(JSON.stringify(start!.payload)), 4096)
      const aps = (start!.payload as { aps: { "content-state": { detail: string }; alert: { title: string; body: string } } }).aps
      assert.isTrue(aps["content-state"].detail.endsWith("…"))
      assert.isTrue(prompt.startsWith(aps["content-state"].detail.slice(0, -1)))
      assert.isAbove(aps["content-state"].detail.length, 100)
      assert.strictEqual(aps.alert.body, aps["content-state"].detail)
      assert.strictEqual(aps.alert.title, title)
      const [android] = yield* eventually(cardPushes(agent, pixel.id), (items) => items.length === 1)
      assert.isAtMost(Buffer.byteLength(JSON.stringify((android!.payload as { data: unknown }).data)), 4096)

      // The cut text ends the card too.
      yield* agent.app.interactions.answer({ params: { id: created.interaction.id }, payload: { status: "approved" } })
      const ended = yield* eventually(cardPushes(agent, pixel.id), (items) => items.length === 2)
      const endState = JSON.parse((ended[1]!.payload as { data: { state: string } }).data.state)
      assert.deepStrictEqual([endState.status, endState.detail], ["approved", aps["content-state"].detail])
    }))

  it.effect("the activities routes read a prompt's card but cannot change or end it: 409 CONFLICT", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes, "activities:read", "activities:write"])
      const pixel = yield* capablePhone(agent, "android")
      const created = yield* askOnCard(agent, "Deploy?")
      const id = created.liveActivityId!
      yield* eventually(cardPushes(agent, pixel.id), (items) => items.length === 1)
      assert.strictEqual((yield* agent.client.activities.get({ params: { identifier: id } })).id, id)

      const rewrite = yield* Effect.flip(agent.client.activities.update({
        params: { identifier: id },
        payload: { props: { title: "Something else", detail: "different", actionDigest: "00" } }
      }))
      assert.strictEqual(rewrite._tag, "Conflict")
      const ending = yield* Effect.flip(agent.client.activities.end({ params: { identifier: id } }))
      assert.strictEqual(ending._tag, "Conflict")

      // Nothing reached the phone, and the prompt and its card are as they were.
      assert.lengthOf(yield* cardPushes(agent, pixel.id), 1)
      const card = yield* agent.client.activities.get({ params: { identifier: id } })
      assert.strictEqual(card.props.title, "Deploy?")
      assert.notStrictEqual(card.status, "ended")
      assert.strictEqual((yield* agent.client.interactions.get({ params: { id: created.interaction.id } })).status, "pending")
    }))

  it.effect("an iOS device without a push-to-start token fails its start and counts nothing", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      const iphone = yield* capablePhone(agent, "ios", false)
      const created = yield* askOnCard(agent)
      assert.strictEqual(created.queued, 1)
      const sql = yield* SqlClient.SqlClient
      const [op] = yield* eventually(
        sql<{ status: string; errorCode: string | null }>`SELECT status, error_code FROM live_activity_operations WHERE device_id = ${iphone.id}`,
        (rows) => rows[0]?.status === "failed"
      )
      assert.strictEqual(op?.errorCode, "NoPushToStartToken")
      assert.lengthOf(yield* cardPushes(agent, iphone.id), 0)
      assert.strictEqual((yield* agent.client.interactions.get({ params: { id: created.interaction.id } })).accepted, 0)
    }))

  it.effect("five concurrent cards per device: of ten parallel asks exactly five succeed; an ended card frees its place", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...scopes])
      yield* capablePhone(agent, "android")
      const results = yield* Effect.forEach(
        Array.from({ length: 10 }, (_, n) => n),
        (n) => Effect.result(askOnCard(agent, `card ${n}`)),
        { concurrency: "unbounded" }
      )
      const started = results.filter((r) => r._tag === "Success")
      const full = results.filter((r) => r._tag === "Failure")
      assert.strictEqual(started.length, 5)
      assert.strictEqual(full.length, 5)
      for (const r of full) {
        assert.strictEqual(r._tag === "Failure" ? r.failure._tag : "", "ActivityCapacityExceeded")
        assert.strictEqual(r._tag === "Failure" && r.failure._tag === "ActivityCapacityExceeded" ? r.failure.limit : 0, 5)
      }
      // Only the five started prompts exist.
      assert.lengthOf((yield* agent.client.interactions.list()).items, 5)

      const first = started[0]!._tag === "Success" ? started[0]!.success.interaction.id : ""
      yield* agent.client.interactions.cancel({ params: { id: first } })
      const again = yield* askOnCard(agent, "after one ended")
      assert.strictEqual(again.queued, 1)
    }))
})
