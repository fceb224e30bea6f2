/**
 * The person's inbox in the Person API (the console's inbox page): the reads
 * and read marks with a session, another person's items answering 404, and
 * the live stream — an agent's notification, a prompt answered, a withdrawal
 * and a read mark each reaching the open stream as `event: item`, nobody
 * else's stream hearing of them, the bound on open streams, and the end of
 * the stream with the session.
 */
import { assert, layer } from "@effect/vitest"
import { InboxStreamItem, INBOX_STREAMS_PER_PERSON } from "@herald/api"
import { Effect, Fiber, Stream } from "effect"
import { SqlClient } from "effect/sql"
import { eventually } from "../../../../test/support/eventually.ts"
import { sentNotification } from "../../../../test/support/notifications.ts"
import { makeAgent, makePerson, personClient, rawFetch, registerDevice, TestServerLayer } from "../../../../test/support/server.ts"
import { InboxSignals } from "../../src/inbox/InboxSignals.ts"
import { openStream } from "../../../../test/support/inboxStream.ts"
import { seed } from "./inboxSupport.ts"

const until = (check: () => boolean) => eventually(Effect.sync(check), (ok) => ok)

layer(TestServerLayer, { timeout: "180 seconds", excludeTestServices: true })("person inbox", (it) => {
  it.effect("lists, reads and marks the signed-in person's inbox; another person's item answers 404 like a missing one", () =>
    Effect.gen(function*() {
      const me = yield* makePerson("reader")
      const other = yield* makePerson("other")
      const app = yield* personClient(me.session)
      const [first, second, third] = yield* seed(me.person.id, [{ title: "one" }, { title: "two" }, { title: "three" }])
      const [theirs] = yield* seed(other.person.id, [{ title: "theirs" }])

      const page = yield* app.inbox.list({ query: { limit: 2 } })
      assert.deepStrictEqual(page.items.map((i) => i.id), [third, second])
      assert.isNotNull(page.nextCursor)
      const rest = yield* app.inbox.list({ query: { limit: 2, cursor: page.nextCursor! } })
      assert.deepStrictEqual(rest.items.map((i) => i.id), [first])

      const detail = yield* app.inbox.get({ params: { id: second! } })
      assert.strictEqual(detail.title, "two")
      assert.deepStrictEqual(detail.pushReceipts, [])

      const read = yield* app.inbox.read({ params: { id: second! } })
      assert.isNotNull(read.readAt)
      assert.isFalse(read.idempotent)
      assert.isTrue((yield* app.inbox.read({ params: { id: second! } })).idempotent)
      assert.deepStrictEqual((yield* app.inbox.list({ query: { unread: "true" } })).items.map((i) => i.id), [third, first])
      const unread = yield* app.inbox.unread({ params: { id: second! } })
      assert.isNull(unread.readAt)
      assert.isFalse(unread.idempotent)

      // Read-all with a list's token marks what that list saw; without one, everything so far.
      const [fourth] = yield* seed(me.person.id, [{ title: "four" }])
      const marked = yield* app.inbox.readAll({ payload: { readThroughToken: page.readThroughToken } })
      assert.strictEqual(marked.marked, 3)
      assert.deepStrictEqual((yield* app.inbox.list({ query: { unread: "1" } })).items.map((i) => i.id), [fourth])
      assert.strictEqual((yield* app.inbox.readAll({ payload: {} })).marked, 1)
      assert.deepStrictEqual((yield* app.inbox.list({ query: { unread: "1" } })).items, [])

      // Another person's item: the same 404 as a missing one, on every item route; never listed.
      const missing = "notification:anot_0000000000000000000000000a"
      for (const suffix of ["", "/read", "/unread"]) {
        const method = suffix === "" ? "GET" : "POST"
        const init = { method, headers: { authorization: `Bearer ${me.session}` } }
        const foreign = yield* rawFetch(`/api/app/inbox/${theirs}${suffix}`, init)
        const absent = yield* rawFetch(`/api/app/inbox/${missing}${suffix}`, init)
        assert.strictEqual(foreign.status, 404, suffix)
        assert.deepStrictEqual(foreign.body, absent.body, suffix)
      }
      assert.isFalse((yield* app.inbox.list({ query: { limit: 50 } })).items.some((i) => i.id === theirs))
      const otherToken = (yield* (yield* personClient(other.session)).inbox.list()).readThroughToken
      const refused = yield* rawFetch("/api/app/inbox/read-all", {
        method: "POST",
        headers: { authorization: `Bearer ${me.session}`, "content-type": "application/json" },
        body: JSON.stringify({ readThroughToken: otherToken })
      })
      assert.strictEqual(refused.status, 400)
      assert.strictEqual((refused.body as { code: string }).code, "BAD_REQUEST")
      assert.strictEqual((yield* rawFetch("/api/app/inbox")).status, 401)
    }))

  it.effect("the stream hears of an agent's notification, a withdrawal, a read mark and an answered prompt, and nobody else's stream does", () =>
    Effect.gen(function*() {
      const agent = yield* makeAgent(["notifications:send", "interactions:create", "interactions:read"])
      const bystander = yield* makePerson("bystander")
      yield* registerDevice(agent, "iphone-")
      const stream = yield* openStream(agent.session)
      const theirs = yield* openStream(bystander.session)
      assert.strictEqual(stream.status, 200)
      assert.match(stream.headers.get("content-type") ?? "", /^text\/event-stream/)
      assert.strictEqual(stream.headers.get("cache-control"), "no-store")
      // A ping as it opens: the browser knows it is connected.
      yield* until(() => stream.frames.length > 0)
      assert.deepStrictEqual(stream.frames[0], { comment: "ping" })

      const { notification } = yield* sentNotification(agent.client.notifications.create({ payload: { title: "Deploy", body: "done" } }))
      const ref = `notification:${notification.id}`
      yield* until(() => stream.items().includes(ref))
      const event = stream.frames.find((f) => f.event === "item")!
      assert.deepStrictEqual(JSON.parse(event.data!), { id: ref, origin: "notification" })

      yield* agent.app.inbox.read({ params: { id: ref } })
      yield* until(() => stream.items().filter((id) => id === ref).length === 2)
      yield* agent.client.notifications.withdraw({ params: { id: notification.id } })
      yield* until(() => stream.items().filter((id) => id === ref).length === 3)
      assert.strictEqual((yield* agent.app.inbox.get({ params: { id: ref } })).status, "withdrawn")

      const { interaction } = yield* agent.client.interactions.create({ payload: { kind: "approval", title: "Ship?", prompt: "p" } })
      const prompt = `interaction:${interaction.id}`
      yield* until(() => stream.items().includes(prompt))
      yield* agent.app.interactions.answer({ params: { id: interaction.id }, payload: { status: "approved" } })
      yield* until(() => stream.items().filter((id) => id === prompt).length === 2)
      assert.strictEqual((yield* agent.app.inbox.get({ params: { id: prompt } })).status, "approved")

      // The bystander's stream got its pings and nothing of the other person's inbox.
      assert.deepStrictEqual(theirs.items(), [])
      assert.isTrue(theirs.frames.length > 0)
    }))

  it.effect("the typed client reads the stream as decoded `item` events; the OpenAPI document declares it text/event-stream", () =>
    Effect.gen(function*() {
      const signals = yield* InboxSignals
      const agent = yield* makeAgent(["notifications:send"])
      const events = yield* agent.app.inbox.stream()
      const first = yield* Effect.forkChild(Stream.runHead(events))
      yield* until(() => signals.open(agent.person.id) === 1)
      const { notification } = yield* sentNotification(agent.client.notifications.create({ payload: { title: "t", body: "b" } }))
      const head = yield* Fiber.join(first)
      assert.strictEqual(head._tag, "Some")
      const item = head._tag === "Some" ? head.value : undefined
      assert.strictEqual(item?.event, "item")
      assert.instanceOf(item?.data, InboxStreamItem)
      assert.deepStrictEqual({ ...item!.data }, { id: `notification:${notification.id}`, origin: "notification" })

      const doc = (yield* rawFetch("/api/app/openapi.json")).body as {
        paths: Record<string, { get?: { responses: Record<string, { content?: Record<string, unknown> }> } }>
      }
      assert.property(doc.paths["/api/app/inbox/stream"]!.get!.responses["200"]!.content, "text/event-stream")
    }))

  it.effect(`a person holds at most ${INBOX_STREAMS_PER_PERSON} streams: one more answers 429; a closed one frees its place`, () =>
    Effect.gen(function*() {
      const signals = yield* InboxSignals
      const me = yield* makePerson("tabs")
      const open = yield* Effect.forEach(Array.from({ length: INBOX_STREAMS_PER_PERSON }), () => openStream(me.session))
      assert.isTrue(open.every((s) => s.status === 200))
      assert.strictEqual(signals.open(me.person.id), INBOX_STREAMS_PER_PERSON)
      const refused = yield* openStream(me.session)
      assert.strictEqual(refused.status, 429)
      assert.deepStrictEqual(refused.body, {
        error: `At most ${INBOX_STREAMS_PER_PERSON} inbox streams may be open at once; close another one first.`,
        code: "RATE_LIMITED"
      })
      // Another person is not affected.
      assert.strictEqual((yield* openStream((yield* makePerson("else")).session)).status, 200)
      yield* open[0]!.close
      yield* eventually(Effect.sync(() => signals.open(me.person.id)), (n) => n === INBOX_STREAMS_PER_PERSON - 1)
      assert.strictEqual((yield* openStream(me.session)).status, 200)
    }))

  it.effect("the stream ends when the session is revoked; reconnecting answers 401", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const signals = yield* InboxSignals
      const me = yield* makePerson("leaving")
      const stream = yield* openStream(me.session)
      yield* until(() => stream.frames.length > 0)
      yield* sql`UPDATE sessions SET revoked_at = now() WHERE user_id = ${me.person.id}`
      yield* until(stream.ended)
      yield* eventually(Effect.sync(() => signals.open(me.person.id)), (n) => n === 0)
      assert.strictEqual((yield* openStream(me.session)).status, 401)
    }))
})
