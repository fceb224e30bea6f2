/**
 * End to end against real `herald serve` processes: the CLI makes a person
 * and a session, the Person API makes a token and registers devices, and the
 * typed client exercises every operation of the Agent API, including each
 * 401/403/404 case. Run in embedded mode (the CLI reaching the running
 * server's database through its socket) and on PostgreSQL when configured.
 */
import { assert, describe, it } from "@effect/vitest"
import { HeraldClient, HeraldPersonClient, createClient, HeraldError } from "@herald/client"
import { Effect } from "effect"
import { childDatabase, tempDir, usingPostgres } from "../support/database.ts"
import { cli, cliJson, startServer, stopServer } from "../support/process.ts"

const clients = (baseUrl: string, session: string, token: string) =>
  Effect.all({
    app: Effect.provide(Effect.service(HeraldPersonClient), HeraldPersonClient.layer({ baseUrl, token: session, retries: 0 })),
    agent: Effect.provide(Effect.service(HeraldClient), HeraldClient.layer({ baseUrl, token, retries: 0 }))
  })

const journey = (env: Record<string, string>) =>
  Effect.gen(function*() {
    const server = yield* startServer(env)
    assert.match(server.output(), /herald listening on http:\/\/127\.0\.0\.1:\d+ · database: .+ · push: sandbox/)
    // Logs go to stderr: stdout is kept for the CLI's JSON answers.
    assert.strictEqual(server.stdout(), "")

    // The CLI works while the server runs (embedded: through the server's socket).
    const person = yield* cliJson<{ id: string; email: string; name: string }>(
      ["admin", "user", "create", "--email", "grace@example.test", "--name", "Grace Hopper"], env
    )
    assert.match(person.id, /^usr_/)
    assert.deepStrictEqual({ email: person.email, name: person.name }, { email: "grace@example.test", name: "Grace Hopper" })
    const duplicate = yield* cli(["admin", "user", "create", "--email", "GRACE@example.test", "--name", "Again"], env)
    assert.notStrictEqual(duplicate.code, 0)
    assert.include(duplicate.stderr, "exists")
    const session = yield* cliJson<{ token: string; userId: string }>(["admin", "session", "create", "--user", "grace@example.test"], env)
    assert.strictEqual(session.userId, person.id)
    assert.match(session.token, /^hls_/)

    const { app } = yield* clients(server.baseUrl, session.token, "unused")
    assert.strictEqual((yield* app.me.get()).id, person.id)
    const full = yield* app.tokens.create({ payload: { name: "e2e", scopes: ["tokens:manage", "devices:read", "devices:write"] } })
    const narrow = yield* app.tokens.create({ payload: { name: "narrow", scopes: [] } })
    const phone = yield* app.devices.register({ payload: { platform: "ios", deviceName: "e2e phone", pushToken: "e2e-token" } })

    const { agent } = yield* clients(server.baseUrl, session.token, full.secret)
    const status = yield* agent.auth.status()
    assert.strictEqual(status.userId, person.id)
    assert.strictEqual(status.token.id, full.token.id)
    assert.deepStrictEqual((yield* agent.tokens.list()).items.map((t) => t.id), [narrow.token.id, full.token.id])
    assert.deepStrictEqual((yield* agent.devices.list()).items.map((d) => d.id), [phone.id])

    // 401s, 403 and 404s.
    const { agent: anonymous } = yield* clients(server.baseUrl, session.token, "")
    assert.strictEqual((yield* Effect.flip(anonymous.auth.status()))._tag, "Unauthorized")
    const { agent: narrowAgent } = yield* clients(server.baseUrl, session.token, narrow.secret)
    const missing = yield* Effect.flip(narrowAgent.devices.list())
    assert.strictEqual(missing._tag, "MissingScope")
    assert.strictEqual((yield* Effect.flip(agent.devices.remove({ params: { id: "dev_0000000000000000000000000z" } })))._tag, "NotFound")

    // Bad input answers the spec's error body, from the real process too.
    const post = (path: string, body: string, headers: Record<string, string> = {}) =>
      Effect.promise(() =>
        fetch(`${server.baseUrl}${path}`, {
          method: "POST",
          headers: { authorization: `Bearer ${session.token}`, "content-type": "application/json", ...headers },
          body
        }).then(async (r) => ({ status: r.status, body: await r.json() as { code: string; issues?: unknown } })))
    assert.deepStrictEqual(
      [(yield* post("/api/app/tokens", "{")).body.code, (yield* post("/api/app/tokens", "{")).status],
      ["VALIDATION_FAILED", 400]
    )
    const unknownField = yield* post("/api/app/tokens", JSON.stringify({ name: "x", scopes: [], root: true }))
    assert.strictEqual(unknownField.status, 400)
    assert.include(JSON.stringify(unknownField.body.issues), "root")
    const tooBig = yield* post("/api/app/tokens", JSON.stringify({ name: "x".repeat(1_100_000), scopes: [] }))
    assert.deepStrictEqual([tooBig.status, tooBig.body.code], [413, "PAYLOAD_TOO_LARGE"])
    const badId = yield* Effect.promise(() =>
      fetch(`${server.baseUrl}/api/agent/devices/not-an-id`, { method: "DELETE", headers: { authorization: `Bearer ${full.secret}` } })
        .then(async (r) => ({ status: r.status, body: await r.json() as { code: string } })))
    assert.deepStrictEqual([badId.status, badId.body.code], [400, "VALIDATION_FAILED"])

    // Revocation through the agent API takes effect at once.
    assert.deepStrictEqual(yield* agent.tokens.revoke({ params: { id: narrow.token.id } }), { ok: true })
    assert.strictEqual((yield* Effect.flip(narrowAgent.auth.status()))._tag, "Unauthorized")
    // The phone's Person API: push-to-start token, and what the sandbox sent it (nothing yet).
    const started = yield* app.devices.pushToStartToken({ params: { id: phone.id }, payload: { token: "pts-e2e" } })
    assert.isString(started.liveActivityTokenUpdatedAt)
    assert.deepStrictEqual((yield* app.devices.deliveries({ params: { id: phone.id } })).items, [])
    assert.deepStrictEqual(yield* agent.devices.remove({ params: { id: phone.id } }), { ok: true })
    assert.deepStrictEqual((yield* agent.devices.list()).items, [])

    // A token revokes itself.
    const selfRevoking = yield* app.tokens.create({ payload: { name: "one-shot", scopes: [] } })
    const { agent: oneShot } = yield* clients(server.baseUrl, session.token, selfRevoking.secret)
    assert.deepStrictEqual(yield* oneShot.auth.revoke(), { ok: true })
    assert.strictEqual((yield* Effect.flip(oneShot.auth.status()))._tag, "Unauthorized")

    // The Promise face against the same server.
    const herald = createClient({ baseUrl: server.baseUrl, token: full.secret })
    const viaPromise = yield* Effect.promise(() => herald.auth.status())
    assert.strictEqual(viaPromise.token.id, full.token.id)
    const rejected = yield* Effect.promise(() => herald.tokens.revoke({ params: { id: "tok_0000000000000000000000000z" } }).then(() => undefined, (e: unknown) => e))
    assert.instanceOf(rejected, HeraldError)
    assert.strictEqual((rejected as HeraldError).status, 404)
    assert.strictEqual((rejected as HeraldError).code, "NOT_FOUND")
    yield* Effect.promise(() => herald.close())

    // Docs and OpenAPI are served, generated from the definitions.
    const openapi = yield* Effect.promise(() => fetch(`${server.baseUrl}/api/agent/openapi.json`).then((r) => r.json() as Promise<{ openapi: string; info: { version: string } }>))
    assert.strictEqual(openapi.openapi, "3.1.0")
    assert.strictEqual(openapi.info.version, "1.0.0")
    const docs = yield* Effect.promise(() => fetch(`${server.baseUrl}/api/agent/docs`).then((r) => r.text()))
    assert.include(docs, "<html")
    const metrics = yield* Effect.promise(() => fetch(`${server.baseUrl}/metrics`).then((r) => r.text()))
    assert.include(metrics, "herald_http_requests_total")

    // Data survives a restart.
    const exit = yield* stopServer(server)
    assert.strictEqual(exit, 0)
    const again = yield* startServer(env)
    const { agent: after } = yield* clients(again.baseUrl, session.token, full.secret)
    assert.strictEqual((yield* after.auth.status()).userId, person.id)
    assert.strictEqual((yield* Effect.flip(clients(again.baseUrl, session.token, narrow.secret).pipe(Effect.flatMap(({ agent }) => agent.auth.status()))))._tag, "Unauthorized")
  })

describe("herald serve, end to end", () => {
  it.live("embedded database: CLI, Person API, Agent API, restart", () =>
    Effect.scoped(Effect.gen(function*() {
      const dataDir = yield* tempDir("e2e")
      yield* journey({ HERALD_DATA_DIR: dataDir })
    })), { timeout: 180_000 })

  it.live("PostgreSQL (or embedded where none is configured): the same journey", () =>
    Effect.scoped(Effect.gen(function*() {
      const db = yield* childDatabase
      assert.strictEqual(db.kind, usingPostgres ? "postgres" : "embedded")
      yield* journey(db.env)
    })), { timeout: 180_000 })
})
