/**
 * The live inbox against real `herald serve` processes. Across two processes
 * on one PostgreSQL database (the embedded database belongs to one process):
 * a person's stream is held by one process while an agent sends a
 * notification and the person answers a prompt through the other; both reach
 * the stream (the writing process's NOTIFY, heard by the listener of the one
 * holding it), and the holding process's own changes arrive once, not twice.
 * And on any database: a server asked to stop ends its open streams rather
 * than waiting out their connections.
 */
import { assert, describe, it } from "@effect/vitest"
import { HeraldClient, HeraldPersonClient, notificationOf } from "@herald/client"
import { Effect } from "effect"
import { childDatabase, usingPostgres } from "../support/database.ts"
import { eventually } from "../support/eventually.ts"
import { openStreamAt } from "../support/inboxStream.ts"
import { startServer, stopServer } from "../support/process.ts"
import { personOn } from "../support/serverClients.ts"

const clients = (baseUrl: string, session: string, token: string) =>
  Effect.all({
    app: Effect.provide(Effect.service(HeraldPersonClient), HeraldPersonClient.layer({ baseUrl, token: session, retries: 0 })),
    agent: Effect.provide(Effect.service(HeraldClient), HeraldClient.layer({ baseUrl, token, retries: 0 }))
  })

describe("the inbox stream at shutdown", () => {
  it.live("SIGTERM ends the open streams: the server exits at once, not after its graceful-close timeout", () =>
    Effect.scoped(Effect.gen(function*() {
      const { env } = yield* childDatabase
      const server = yield* startServer(env)
      const { session } = yield* personOn(env, { email: "max@example.test", name: "Max" })
      const streams = yield* Effect.all([openStreamAt(server.baseUrl, session), openStreamAt(server.baseUrl, session)])
      yield* eventually(Effect.sync(() => streams.every((s) => s.frames.length > 0)), (open) => open)
      const stoppedAt = Date.now()
      assert.strictEqual(yield* stopServer(server), 0)
      // The server's graceful close waits up to 20 s for open connections: well under it means it did not wait.
      assert.isBelow(Date.now() - stoppedAt, 10_000)
      yield* eventually(Effect.sync(() => streams.every((s) => s.ended())), (ended) => ended)
    })), { timeout: 120_000 })
})

describe.runIf(usingPostgres)("the inbox stream across two processes", () => {
  it.live("changes made on one process reach a stream held by the other, once each", () =>
    Effect.scoped(Effect.gen(function*() {
      const { env } = yield* childDatabase
      // Each with a runner address (port 0: the one bound): without it a node beside a live runner refuses to start.
      const node = { ...env, HERALD_RUNNER_ADDRESS: "127.0.0.1:0" }
      const [one, two] = yield* Effect.all([startServer(node), startServer(node)], { concurrency: 2 })
      const { session } = yield* personOn(env, { email: "ada@example.test", name: "Ada" })
      const first = yield* clients(one.baseUrl, session, "unused")
      const token = yield* first.app.tokens.create({
        payload: { name: "two nodes", scopes: ["notifications:send", "interactions:create"] }
      })
      const a = yield* clients(one.baseUrl, session, token.secret)
      const b = yield* clients(two.baseUrl, session, token.secret)

      const stream = yield* openStreamAt(one.baseUrl, session)
      assert.strictEqual(stream.status, 200)
      yield* eventually(Effect.sync(() => stream.frames.length), (n) => n > 0)

      const sent = yield* b.agent.notifications.create({ payload: { title: "From two", body: "b" } })
      const ref = `notification:${notificationOf(sent).notification.id}`
      yield* eventually(Effect.sync(() => stream.items()), (items) => items.includes(ref))

      const { interaction } = yield* a.agent.interactions.create({ payload: { kind: "yes_no", title: "Go?", prompt: "p" } })
      const prompt = `interaction:${interaction.id}`
      yield* eventually(Effect.sync(() => stream.items()), (items) => items.includes(prompt))
      yield* b.app.interactions.answer({ params: { id: interaction.id }, payload: { status: "yes" } })
      yield* eventually(Effect.sync(() => stream.items().filter((id) => id === prompt).length), (n) => n === 2)

      // A marker written last, on the other process: once its NOTIFY is heard, every earlier one has been too
      // (one listening connection, commit order), so the holding process's own prompt, had it not skipped
      // its NOTIFY coming back, would show twice by now.
      yield* b.app.inbox.read({ params: { id: ref } })
      yield* eventually(Effect.sync(() => stream.items().filter((id) => id === ref).length), (n) => n === 2)
      assert.deepStrictEqual(stream.items(), [ref, prompt, prompt, ref])
    })), { timeout: 120_000 })
})
