/**
 * The inbox over HTTP with the typed client: scopes, another account's items,
 * validation, the list's fields, an item's detail with its push receipts, and
 * the project view. Items are seeded through InboxWrites, as notifications and
 * events write them.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { TestServerLayer, makeAgent, rawFetch } from "../../../../test/support/server.ts"
import { makeId } from "../../src/lib/Ids.ts"
import { get, many, plain, post, seed } from "./inboxSupport.ts"

const READ_ROUTES = ["/inbox/projects", "/inbox/notifications", "/inbox/notifications/notification:anot_x1"] as const
const WRITE_ROUTES = [
  ["/inbox/notifications/notification:anot_x1/read", undefined],
  ["/inbox/notifications/notification:anot_x1/unread", undefined],
  ["/inbox/notifications/read-all", { readThroughToken: "x" }]
] as const

layer(TestServerLayer, { timeout: "180 seconds", excludeTestServices: true })("inbox", (it) => {
  it.effect("every route needs its scope: 401 without a token, 403 MISSING_SCOPE naming inbox:read or inbox:write", () =>
    Effect.gen(function*() {
      const none = yield* makeAgent([])
      const reader = yield* makeAgent(["inbox:read"])
      const writer = yield* makeAgent(["inbox:write"])
      for (const path of READ_ROUTES) {
        assert.strictEqual((yield* rawFetch(`/api/agent${path}`)).status, 401, path)
        for (const agent of [none, writer]) {
          const res = yield* get(agent.secret, path)
          assert.strictEqual(res.status, 403, path)
          assert.deepStrictEqual(res.body, {
            error: "The token lacks scopes: inbox:read.",
            code: "MISSING_SCOPE",
            required: ["inbox:read"]
          })
        }
      }
      for (const [path, body] of WRITE_ROUTES) {
        assert.strictEqual((yield* rawFetch(`/api/agent${path}`, { method: "POST" })).status, 401, path)
        for (const agent of [none, reader]) {
          const res = yield* post(agent.secret, path, body)
          assert.strictEqual(res.status, 403, path)
          assert.deepStrictEqual((res.body as { required: Array<string> }).required, ["inbox:write"])
        }
      }
      // With the scope the same routes answer (404: the item does not exist; 400: the token is not one).
      assert.strictEqual((yield* get(reader.secret, "/inbox/projects")).status, 200)
      assert.strictEqual((yield* get(reader.secret, "/inbox/notifications/notification:anot_x1")).status, 404)
      assert.strictEqual((yield* post(writer.secret, "/inbox/notifications/notification:anot_x1/read")).status, 404)
      assert.strictEqual((yield* post(writer.secret, "/inbox/notifications/read-all", { readThroughToken: "x" })).status, 400)
    }))

  it.effect("another account's item is 404 like a missing one on every item route, and never listed", () =>
    Effect.gen(function*() {
      const a = yield* makeAgent(["inbox:read", "inbox:write"])
      const b = yield* makeAgent(["inbox:read", "inbox:write"])
      const [theirs] = yield* seed(b.person.id, [{ projectId: "secret-project" }])
      const missing = "notification:anot_0000000000000000000000000a"
      for (const suffix of ["", "/read", "/unread"]) {
        const foreign = suffix === "" ? yield* get(a.secret, `/inbox/notifications/${theirs}`)
          : yield* post(a.secret, `/inbox/notifications/${theirs}${suffix}`)
        const none = suffix === "" ? yield* get(a.secret, `/inbox/notifications/${missing}`)
          : yield* post(a.secret, `/inbox/notifications/${missing}${suffix}`)
        assert.strictEqual(foreign.status, 404)
        assert.deepStrictEqual(foreign.body, none.body)
        assert.deepStrictEqual(foreign.body, { error: "Inbox item not found.", code: "NOT_FOUND" })
      }
      assert.strictEqual((yield* Effect.flip(a.client.inbox.get({ params: { id: theirs! } })))._tag, "NotFound")
      assert.deepStrictEqual((yield* a.client.inbox.list()).items, [])
      assert.deepStrictEqual(plain(yield* a.client.inbox.projects()), { projects: [], totalUnread: 0 })
      // b's item is untouched by a's attempts.
      const detail = yield* b.client.inbox.get({ params: { id: theirs! } })
      assert.isNull(detail.readAt)
    }))

  it.effect("a malformed item id or query is 400 VALIDATION_FAILED; limit is 1–50", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["inbox:read"])
      for (const query of ["limit=0", "limit=51", "limit=abc", "limit=2.5", "unread=yes", "project="]) {
        const res = yield* get(agent.secret, `/inbox/notifications?${query}`)
        assert.strictEqual(res.status, 400, query)
        assert.strictEqual((res.body as { code: string }).code, "VALIDATION_FAILED", query)
      }
      for (const id of ["anot_1", "notification:evt_1", "event:anot_1", "notification:anot_a-b"]) {
        assert.strictEqual((yield* get(agent.secret, `/inbox/notifications/${id}`)).status, 400, id)
      }
      assert.strictEqual((yield* get(agent.secret, "/inbox/notifications?limit=1")).status, 200)
      assert.strictEqual((yield* get(agent.secret, "/inbox/notifications?limit=50")).status, 200)
    }))


  it.effect("the list is newest first with every summary field; limit defaults to 20", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["inbox:read"])
      const ids = yield* seed(agent.person.id, many(24))
      const [event] = yield* seed(agent.person.id, [{
        origin: "event",
        projectId: "deploys",
        sourceName: "Builds",
        sourceImageUrl: "https://img.example/b.png",
        title: "Build **green**",
        body: "# Done\n\nAll [tests](https://ci.example/1) passed.",
        bodyFormat: "markdown",
        url: "https://ci.example/1"
      }])
      const page = yield* agent.client.inbox.list()
      assert.strictEqual(page.items.length, 20)
      assert.deepStrictEqual(page.items.map((i) => i.id), [event!, ...ids.slice(-19).reverse()])
      assert.isString(page.nextCursor)
      const first = page.items[0]!
      assert.deepStrictEqual({ ...first, createdAt: "t" }, {
        id: event!,
        origin: "event",
        projectId: "deploys",
        projectName: "deploys",
        sourceName: "Builds",
        sourceImageUrl: "https://img.example/b.png",
        title: "Build **green**",
        preview: "Done All tests passed.",
        url: "https://ci.example/1",
        bodyFormat: "markdown",
        readAt: null,
        createdAt: "t",
        app: null
      })
      assert.isTrue(Date.parse(first.createdAt) > 0)
      assert.deepStrictEqual(page.items[1]!.projectId, null)
      assert.deepStrictEqual(page.items[1]!.projectName, null)
      const rest = yield* agent.client.inbox.list({ query: { cursor: page.nextCursor! } })
      assert.deepStrictEqual(rest.items.map((i) => i.id), ids.slice(0, 5).reverse())
      assert.isNull(rest.nextCursor)
    }))


  it.effect("detail: body, summary, withdrawn status, and this account's alert receipts with sending shown as pending", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["inbox:read"])
      const other = yield* makeAgent(["inbox:read"])
      const sql = yield* SqlClient.SqlClient
      const phone = yield* agent.app.devices.register({ payload: { platform: "ios", pushToken: `p-${agent.person.id}` } })
      const tablet = yield* agent.app.devices.register({ payload: { platform: "android", pushToken: `t-${agent.person.id}` } })
      const theirs = yield* other.app.devices.register({ payload: { platform: "ios", pushToken: `o-${other.person.id}` } })
      const notificationId = yield* makeId("anot")
      yield* sql`INSERT INTO notifications (id, user_id, source_name, title, body, withdrawn_at)
                 VALUES (${notificationId}, ${agent.person.id}, 'ci', 'Deploy', 'Shipped', now())`
      const [id] = yield* seed(agent.person.id, [{
        itemId: notificationId,
        title: "Deploy",
        body: "Shipped *v2*",
        bodyFormat: "markdown",
        summary: "v2 is live"
      }])
      // A receipt belongs to its device's owner (a family member's, for a shared service's event).
      const receipt = (deviceId: string, status: string, extra: { purpose?: string; errorCode?: string; checked?: boolean; userId?: string } = {}) =>
        Effect.gen(function*() {
          const rid = yield* makeId("rcp")
          yield* sql`INSERT INTO push_receipts (id, user_id, device_id, origin, item_id, purpose, status, error_code, checked_at)
                     VALUES (${rid}, ${extra.userId ?? agent.person.id}, ${deviceId}, 'notification', ${notificationId},
                             ${extra.purpose ?? "alert"}, ${status}, ${extra.errorCode ?? null},
                             ${extra.checked === true ? sql`now()` : sql`NULL`})`
          return rid
        })
      const accepted = yield* receipt(phone.id, "accepted", { checked: true })
      const sending = yield* receipt(tablet.id, "sending")
      yield* receipt(phone.id, "accepted", { purpose: "withdraw" })
      yield* receipt(theirs.id, "accepted", { userId: other.person.id })
      const detail = yield* agent.client.inbox.get({ params: { id: id! } })
      assert.strictEqual(detail.id, id)
      assert.strictEqual(detail.body, "Shipped *v2*")
      assert.strictEqual(detail.preview, "Shipped v2")
      assert.strictEqual(detail.summary, "v2 is live")
      assert.strictEqual(detail.status, "withdrawn")
      assert.strictEqual(detail.app, null)
      const receipts = detail.pushReceipts!
      assert.deepStrictEqual(receipts.map((r) => [r.id, r.deviceId, r.status, r.errorCode]).sort(), [
        [accepted, phone.id, "accepted", null],
        [sending, tablet.id, "pending", null]
      ].sort())
      assert.isString(receipts.find((r) => r.id === accepted)!.checkedAt)
      assert.isNull(receipts.find((r) => r.id === sending)!.checkedAt)

      // An error receipt keeps its code; an event has no status; a notification not withdrawn has none either.
      const liveId = yield* makeId("anot")
      yield* sql`INSERT INTO notifications (id, user_id, source_name, title, body)
                 VALUES (${liveId}, ${agent.person.id}, 'ci', 'Live', 'b')`
      const [live] = yield* seed(agent.person.id, [{ itemId: liveId }])
      const failed = yield* makeId("rcp")
      yield* sql`INSERT INTO push_receipts (id, user_id, device_id, origin, item_id, purpose, status, error_code, checked_at)
                 VALUES (${failed}, ${agent.person.id}, ${phone.id}, 'notification', ${liveId}, 'alert',
                         'error', 'BadDeviceToken', now())`
      const liveDetail = yield* agent.client.inbox.get({ params: { id: live! } })
      assert.isNull(liveDetail.status)
      assert.deepStrictEqual(liveDetail.pushReceipts!.map((r) => [r.status, r.errorCode]), [["error", "BadDeviceToken"]])
      const [event] = yield* seed(agent.person.id, [{ origin: "event" }])
      const eventDetail = yield* agent.client.inbox.get({ params: { id: event! } })
      assert.isNull(eventDetail.status)
      assert.isNull(eventDetail.summary)
      assert.deepStrictEqual(eventDetail.pushReceipts, [])
    }))

  it.effect("projects: one per project and one for the unfiled, counts, latest item, most recent first", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["inbox:read", "inbox:write"])
      const alpha = yield* seed(agent.person.id, many(3, { projectId: "alpha" }))
      yield* seed(agent.person.id, many(2))
      yield* seed(agent.person.id, [{ projectId: "beta", title: "beta one", body: "first" }])
      yield* seed(agent.person.id, [{
        projectId: "alpha",
        title: "alpha latest",
        body: "**bold** news",
        bodyFormat: "markdown",
        sourceImageUrl: "https://img.example/a.png"
      }])
      yield* agent.client.inbox.read({ params: { id: alpha[0]! } })
      yield* agent.client.inbox.read({ params: { id: alpha[1]! } })
      const result = yield* agent.client.inbox.projects()
      assert.strictEqual(result.totalUnread, 2 + 2 + 1)
      assert.deepStrictEqual(result.projects.map((p) => ({ ...p, latestAt: typeof p.latestAt })), [
        {
          projectId: "alpha",
          name: "alpha",
          unreadCount: 2,
          totalCount: 4,
          latestTitle: "alpha latest",
          latestPreview: "bold news",
          latestImageUrl: "https://img.example/a.png",
          latestAt: "string"
        },
        {
          projectId: "beta",
          name: "beta",
          unreadCount: 1,
          totalCount: 1,
          latestTitle: "beta one",
          latestPreview: "first",
          latestImageUrl: null,
          latestAt: "string"
        },
        {
          projectId: null,
          name: "Unfiled",
          unreadCount: 2,
          totalCount: 2,
          latestTitle: "item 1",
          latestPreview: "body 1",
          latestImageUrl: null,
          latestAt: "string"
        }
      ])
      yield* agent.client.inbox.readAll({ payload: { readThroughToken: (yield* agent.client.inbox.list()).readThroughToken } })
      const after = yield* agent.client.inbox.projects()
      assert.strictEqual(after.totalUnread, 0)
      assert.deepStrictEqual(after.projects.map((p) => p.unreadCount), [0, 0, 0])
    }))
})
