/**
 * The Promise face reports each API error with the status its class carries
 * in the contract — every code, not only the common ones (a 409
 * `ACTIVITY_CAPACITY_EXCEEDED` or a 400 `WEBHOOK_TARGET_REFUSED` once came back
 * with no status at all).
 */
import { assert, layer } from "@effect/vitest"
import { createClient, createPersonClient, HeraldError, isHeraldError, isNotification } from "@herald/client"
import { Effect } from "effect"
import * as http from "node:http"
import { makeAgent, makePerson, TestServer, TestServerLayer } from "../../../test/support/server.ts"

const rejection = (call: () => Promise<unknown>) =>
  Effect.promise(() => call().then(() => assert.fail("expected a rejection"), (e: unknown) => e as HeraldError))

layer(TestServerLayer, { excludeTestServices: true, timeout: "60 seconds" })("Promise client", (it) => {
  it.effect("an API error carries its contract status and code", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const agent = yield* makeAgent(["interactions:create", "interactions:read", "services:write"])
      const herald = createClient({ baseUrl, token: agent.secret })
      const created = yield* Effect.promise(() =>
        herald.interactions.create({ payload: { kind: "approval", title: "Ship it?", prompt: "v2" } })
      )
      const id = created.interaction.id
      yield* Effect.promise(() => herald.interactions.cancel({ params: { id } }))
      const again = yield* rejection(() => herald.interactions.cancel({ params: { id } }))
      assert.instanceOf(again, HeraldError)
      assert.deepStrictEqual({ status: again.status, code: again.code, kind: again.kind }, { status: 409, code: "CONFLICT", kind: "api" })
      const refused = yield* rejection(() => herald.webhooks.create({ payload: { name: "inside", url: "https://10.0.0.1/hook" } }))
      assert.deepStrictEqual({ status: refused.status, code: refused.code }, { status: 400, code: "WEBHOOK_TARGET_REFUSED" })
      const missing = yield* rejection(() => herald.interactions.cancel({ params: { id: "int_0000000000000000000000000z" } }))
      assert.deepStrictEqual({ status: missing.status, code: missing.code }, { status: 404, code: "NOT_FOUND" })
      yield* Effect.promise(() => herald.close())
    }))

  it.effect("a request that fails its schema is INVALID_REQUEST (kind local), not TRANSPORT", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const agent = yield* makeAgent(["notifications:send"])
      const herald = createClient({ baseUrl, token: agent.secret })
      const invalid = yield* rejection(() => herald.notifications.create({ payload: { title: "", body: "b" } }))
      assert.isTrue(isHeraldError(invalid, herald.notifications.create))
      assert.deepStrictEqual({ status: invalid.status, code: invalid.code, kind: invalid.kind }, { status: undefined, code: "INVALID_REQUEST", kind: "local" })
      // The same operation with a valid body is sent, without `headers: {}`.
      const sent = yield* Effect.promise(() => herald.notifications.create({ payload: { title: "t", body: "b" } }))
      assert.isTrue(isNotification(sent))
      const unreachable = createClient({ baseUrl: "http://127.0.0.1:9", token: agent.secret, retries: 0 })
      const down = yield* rejection(() => unreachable.auth.status())
      assert.deepStrictEqual({ code: down.code, kind: down.kind }, { code: "TRANSPORT", kind: "transport" })
      yield* Effect.promise(() => Promise.all([herald.close(), unreachable.close()]))
    }))

  it.effect("an answer this client cannot read is INVALID_RESPONSE, not the caller's request", () =>
    Effect.gen(function*() {
      // A server that answers every request 200 with a body no Herald record matches.
      const server = yield* Effect.acquireRelease(
        Effect.promise(() =>
          new Promise<http.Server>((resolve) => {
            const s = http.createServer((_, res) => res.writeHead(200, { "content-type": "application/json" }).end("{\"nope\":1}"))
            s.listen(0, "127.0.0.1", () => resolve(s))
          })),
        (s) => Effect.promise(() => new Promise<void>((resolve) => s.close(() => resolve())))
      )
      const { port } = server.address() as { readonly port: number }
      const herald = createClient({ baseUrl: `http://127.0.0.1:${port}`, token: "hld_x", retries: 0 })
      const unreadable = yield* rejection(() => herald.auth.status())
      assert.deepStrictEqual({ code: unreadable.code, kind: unreadable.kind }, { code: "INVALID_RESPONSE", kind: "transport" })
      yield* Effect.promise(() => herald.close())
    }))

  it.effect("the Person API has a Promise face too", () =>
    Effect.gen(function*() {
      const { baseUrl } = yield* TestServer
      const { person, session } = yield* makePerson()
      const me = createPersonClient({ baseUrl, token: session })
      assert.strictEqual((yield* Effect.promise(() => me.me.get())).id, person.id)
      const refused = yield* rejection(() => createPersonClient({ baseUrl, token: "hls_unknown" }).me.get())
      assert.deepStrictEqual({ status: refused.status, code: refused.code }, { status: 401, code: "UNAUTHORIZED" })
      yield* Effect.promise(() => me.close())
    }))
})
