/**
 * Live activities in the account's activity feed (GET /activity-feed, kind
 * `live_activity`): one entry per activity, written with its start and
 * concluded by its end, its replacement or its expiry; a prompt's card is
 * not one of its own (its prompt has the entry, kind `response`).
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { eventually } from "../../../../test/support/eventually.ts"
import { moveActivityDeadline } from "../../../../test/support/prompts.ts"
import { makeAgent, TestServerLayer } from "../../../../test/support/server.ts"
import { phone, scopes, start } from "./activitySupport.ts"
import type { Agent } from "./activitySupport.ts"

const feedScopes = [...scopes, "events:read", "interactions:create"] as const

/** The feed's live-activity entries, newest first, as `[title, detail, result]`, with the source of each. */
const entries = (agent: Agent) =>
  Effect.map(agent.client.history.activityFeed(), (page) =>
    page.items.filter((i) => i.kind === "live_activity").map((i) => ({ line: [i.title, i.detail, i.result], source: i.sourceName, url: i.url })))

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("live activities in the activity feed", (it) => {
  it.effect("a start is an entry; its end, a replacement and an expiry conclude it, each once", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...feedScopes])
      yield* phone(agent, "android")
      const first = yield* start(agent, { key: "deploy", props: { title: "Deploying v2", status: "Building" } })
      assert.deepStrictEqual(yield* entries(agent), [{ line: ["Deploying v2", "Building", null], source: "test agent", url: null }])
      // Updates change the card, not the feed: still one entry.
      yield* agent.client.activities.update({ params: { identifier: "deploy" }, payload: { props: { status: "Testing" } } })
      assert.lengthOf(yield* entries(agent), 1)

      // A replacing start concludes the replaced activity and adds its own entry.
      const second = yield* start(agent, { key: "deploy", props: { title: "Deploying v3" }, replace: true })
      assert.strictEqual(second.replaced, 1)
      assert.deepStrictEqual((yield* entries(agent)).map((e) => e.line), [
        ["Deploying v3", null, null],
        ["Deploying v2", "Testing", "ended"]
      ])

      yield* agent.client.activities.update({ params: { identifier: "deploy" }, payload: { props: { status: "Live on 100%" } } })
      yield* agent.client.activities.end({ params: { identifier: "deploy" } })
      const nightly = yield* start(agent, { props: { title: "Nightly" }, expiresInSeconds: 60 })
      yield* moveActivityDeadline(nightly.activity.id, Date.now() + 300)
      yield* eventually(agent.client.activities.get({ params: { identifier: nightly.activity.id } }), (a) => a.status === "expired")
      assert.deepStrictEqual(yield* entries(agent), [
        { line: ["Nightly", null, "expired"], source: "test agent", url: null },
        { line: ["Deploying v3", "Live on 100%", "ended"], source: "test agent", url: null },
        { line: ["Deploying v2", "Testing", "ended"], source: "test agent", url: null }
      ])
      assert.notStrictEqual(first.activity.id, second.activity.id)

      // Another account's feed shows none of them.
      const stranger = yield* makeAgent([...feedScopes])
      assert.deepStrictEqual(yield* entries(stranger), [])
    }))

  it.effect("a prompt's card, started and ended with its prompt, is no live-activity entry of its own", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent([...feedScopes])
      yield* agent.app.devices.register({
        payload: { platform: "android", pushToken: `feed-card-${Date.now()}`, liveActivitiesCapable: true, interactiveLiveActivitiesCapable: true }
      })
      const created = yield* agent.client.interactions.create({
        payload: { kind: "approval", title: "Merge PR #42?", prompt: "CI is green.", presentation: "live_activity" }
      })
      assert.isDefined(created.liveActivityId)
      yield* agent.client.interactions.cancel({ params: { id: created.interaction.id } })
      assert.deepStrictEqual(yield* entries(agent), [])
    }))
})
