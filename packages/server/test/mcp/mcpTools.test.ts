/**
 * `notify`, `progress`, `page` and `inbox` with the official SDK against real
 * state: a push reaches the registered phone and the inbox; a live activity
 * starts, updates and ends by key on a capable phone, with the route's
 * refusals as tool errors; an on-call group is paged (the on-call member's
 * phone gets the alert); the inbox lists what was sent.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { MCP_SCOPES } from "../../src/oauth/McpScopes.ts"
import { eventually } from "../../../../test/support/eventually.ts"
import { makeAgent, personClient, registerDevice, TestServerLayer } from "../../../../test/support/server.ts"
import { seedRoles } from "../../../../test/support/teams.ts"
import { phone, sent } from "../http/activitySupport.ts"
import { alertsOf, deliveries, phoneOf, seedGroup } from "../oncall/pagesSupport.ts"
import { callTool, connect } from "./mcpSupport.ts"

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("MCP: notify, progress, page, inbox", (it) => {
  it.effect("notify pushes to the phone and files the push in the inbox, which `inbox` lists", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(MCP_SCOPES)
      const device = yield* registerDevice(agent, "mcp-notify-")
      const connected = yield* connect(agent.secret)

      const sentPush = yield* callTool(connected, "notify", { title: "Build green", body: "All 412 tests passed.", projectId: "herald" })
      assert.isFalse(sentPush.isError)
      assert.match(sentPush.json.notification.id, /^anot_/)
      assert.strictEqual(sentPush.json.notification.title, "Build green")
      assert.strictEqual(sentPush.json.notification.projectId, "herald")
      assert.strictEqual(sentPush.json.accepted, 1)
      assert.deepStrictEqual(sentPush.structured, sentPush.json)
      const received = yield* eventually(
        Effect.map(agent.app.devices.deliveries({ params: { id: device.id } }), (d) => d.items),
        (items) => items.length === 1
      )
      assert.strictEqual(received[0]!.pushType, "alert")

      const inbox = yield* callTool(connected, "inbox", { limit: 5 })
      assert.isFalse(inbox.isError)
      assert.deepStrictEqual(inbox.json.items.map((i: { id: string; title: string }) => [i.id, i.title]), [
        [`notification:${sentPush.json.notification.id}`, "Build green"]
      ])
      const unread = yield* callTool(connected, "inbox", { unread: true, project: "other" })
      assert.deepStrictEqual(unread.json.items, [])
      const tooMany = yield* callTool(connected, "inbox", { limit: 21 })
      assert.isTrue(tooMany.isError)
    }))

  it.effect("progress starts, updates and ends a live activity by key; the route's refusals are tool errors", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(MCP_SCOPES)
      const device = yield* phone(agent, "ios")
      const connected = yield* connect(agent.secret)

      const started = yield* callTool(connected, "progress", { action: "start", key: "build-42", props: { title: "Build 42", progress: 0.1 } })
      assert.isFalse(started.isError, started.text)
      assert.strictEqual(started.json.activity.key, "build-42")
      assert.strictEqual(started.json.activity.props.title, "Build 42")

      const again = yield* callTool(connected, "progress", { action: "start", key: "build-42", props: { title: "Build 42" } })
      assert.isTrue(again.isError)
      assert.strictEqual(again.json.code, "ACTIVITY_KEY_CONFLICT")

      const updated = yield* callTool(connected, "progress", { action: "update", key: "build-42", props: { progress: 0.5, status: "Testing" } })
      assert.isFalse(updated.isError, updated.text)
      assert.strictEqual(updated.json.activity.props.progress, 0.5)
      assert.strictEqual(updated.json.activity.props.status, "Testing")

      const ended = yield* callTool(connected, "progress", { action: "end", key: "build-42" })
      assert.isFalse(ended.isError, ended.text)
      assert.strictEqual(ended.json.activity.status, "ended")
      const endedAgain = yield* callTool(connected, "progress", { action: "end", key: "build-42" })
      assert.isTrue(endedAgain.isError)
      assert.strictEqual(endedAgain.json.code, "ACTIVITY_ENDED")

      // The phone got the start (iOS sends later operations once the activity's update token exists).
      const events = yield* eventually(sent(agent, device.id), (s) => s.length > 0)
      assert.strictEqual(events[0]!.event, "start")

      // A start without its title: the route's 400 body, issues under `arguments`.
      const untitled = yield* callTool(connected, "progress", { action: "start", key: "deploy", props: { status: "Queued" } })
      assert.isTrue(untitled.isError)
      assert.strictEqual(untitled.json.code, "VALIDATION_FAILED")
      assert.deepStrictEqual(untitled.json.issues.map((i: { path: string }) => i.path), ["arguments.props.title"])
      const unknown = yield* callTool(connected, "progress", { action: "update", key: "never-started", props: { progress: 1 } })
      assert.isTrue(unknown.isError)
      assert.strictEqual(unknown.json.code, "NOT_FOUND")
    }))

  it.effect("progress on an account without a capable phone answers NO_LIVE_ACTIVITY_DEVICE", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(MCP_SCOPES)
      const connected = yield* connect(agent.secret)
      const refused = yield* callTool(connected, "progress", { action: "start", key: "k", props: { title: "T" } })
      assert.isTrue(refused.isError)
      assert.strictEqual(refused.json.code, "NO_LIVE_ACTIVITY_DEVICE")
    }))

  it.effect("page pages the on-call member of the group; a repeat with the same dedupKey is absorbed", () =>
    Effect.gen(function*() {
      const { member, outsider, owner, teamId } = yield* seedRoles()
      const groupId = yield* seedGroup(teamId, [member, owner])
      const memberPhone = yield* phoneOf(member)
      const app = yield* personClient(owner.session)
      const token = yield* app.tokens.create({ payload: { name: "mcp pager", scopes: [...MCP_SCOPES] } }).pipe(Effect.orDie)
      const connected = yield* connect(token.secret)

      const paged = yield* callTool(connected, "page", { groupId, title: "API down", body: "5xx at 40%", dedupKey: "api-5xx" })
      assert.isFalse(paged.isError, paged.text)
      assert.isFalse(paged.json.deduplicated)
      assert.strictEqual(paged.json.page.groupId, groupId)
      assert.deepStrictEqual(paged.json.page.notified.map((n: { userId: string }) => n.userId), [member.person.id])
      yield* eventually(Effect.map(deliveries(member, memberPhone), (d) => alertsOf(d, paged.json.page.id)), (a) => a.length === 1)

      const repeat = yield* callTool(connected, "page", { groupId, title: "API down", dedupKey: "api-5xx" })
      assert.isTrue(repeat.json.deduplicated)
      assert.strictEqual(repeat.json.page.id, paged.json.page.id)
      assert.strictEqual(repeat.json.page.repeatCount, 1)

      // Someone outside the team pages nothing: the route's 404.
      const outsiderApp = yield* personClient(outsider.session)
      const outsiderToken = yield* outsiderApp.tokens.create({ payload: { name: "x", scopes: ["oncall:write"] } }).pipe(Effect.orDie)
      const outsiderMcp = yield* connect(outsiderToken.secret)
      const refused = yield* callTool(outsiderMcp, "page", { groupId, title: "API down" })
      assert.isTrue(refused.isError)
      assert.strictEqual(refused.json.code, "NOT_FOUND")
    }))
})
