/**
 * The token's name travels in the authenticated principal, so no answer
 * depends on a credential cache hit. The gate here authenticates with a
 * `Credentials` of its own, and the capabilities run on the platform's, which
 * never saw the token (a cold cache, as on a node that just started or whose
 * entry was evicted): the notification's source and the token status still
 * name the token.
 */
import { assert, layer } from "@effect/vitest"
import { ConfigProvider, Context, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { TestSqlLayer } from "../../../../test/support/database.ts"
import { makeBearerGate, OverRateLimit } from "../../src/auth/BearerGate.ts"
import { Credentials } from "../../src/auth/Credentials.ts"
import { generateSecret } from "../../src/auth/Secrets.ts"
import { Identity } from "../../src/identity/Identity.ts"
import { seedToken } from "./seedToken.ts"
import { NotificationsLayer } from "../../src/notifications/layer.ts"
import { Notifications } from "../../src/notifications/Notifications.ts"
import { PlatformLayer } from "../../src/runtime/Platform.ts"

// No DATABASE_URL: the actor runtime is a single runner, as in every in-process test.
const Environment = ConfigProvider.layer(ConfigProvider.fromUnknown({ HERALD_RATE_LIMIT_PER_MINUTE: "3" }))
const TestLayer = NotificationsLayer.pipe(Layer.provideMerge(PlatformLayer), Layer.provide(Environment), Layer.provideMerge(TestSqlLayer))

const oneRequest = Effect.succeed({ units: { requests: 1, sends: 0 } })


/** The gate over a `Credentials` built apart from the platform's: its cache is not theirs. */
const separateGate = Effect.gen(function*() {
  const own = yield* Layer.build(Layer.fresh(Credentials.layer))
  return yield* Effect.provideService(makeBearerGate, Credentials, Context.get(own, Credentials))
})

layer(TestLayer, { excludeTestServices: true, timeout: "120 seconds" })("the principal carries the token", (it) => {
  it.effect("with the platform's credential cache cold, a notification's source and the token status name the token", () =>
    Effect.gen(function*() {
      const { secret, token, userId } = yield* seedToken({ name: "deploy-bot", scopes: ["notifications:send", "devices:read"] })
      const gate = yield* separateGate
      const { agent } = yield* gate.pass(secret, ["notifications:send"], oneRequest)
      assert.deepStrictEqual(
        [agent.userId, agent.tokenId, agent.tokenName, agent.tokenPrefix, agent.tokenCreatedAt, agent.tokenExpiresAt],
        [userId, token.id, "deploy-bot", token.prefix, token.createdAt, null]
      )
      // The platform's cache never saw this token.
      assert.isTrue(Option.isNone((yield* Credentials).describe(token.id)))

      yield* (yield* Notifications).send(agent, { title: "Deployed", body: "v2 is live." })
      const sql = yield* SqlClient.SqlClient
      const items = yield* sql<{ sourceName: string }>`SELECT source_name FROM inbox_items WHERE user_id = ${userId}`
      assert.deepStrictEqual(items.map((i) => i.sourceName), ["deploy-bot"])

      const status = (yield* Identity).tokenStatus(agent)
      assert.deepStrictEqual([status.userId, status.token.id, status.token.name, status.token.scopes], [
        userId,
        token.id,
        "deploy-bot",
        ["notifications:send", "devices:read"]
      ])
      assert.strictEqual(status.token.lastUsedAt, agent.tokenLastUsedAt)
      assert.isNotNull(status.token.lastUsedAt)
    }).pipe(Effect.scoped))

  it.effect("the gate refuses in order: the bearer, then the scopes, then the rate limit, reading the demand only once let in", () =>
    Effect.gen(function*() {
      const { secret } = yield* seedToken({ name: "ordered", scopes: ["notifications:send", "devices:read"] })
      const gate = yield* separateGate
      let demanded = 0
      const counted = Effect.sync(() => {
        demanded++
        return { units: { requests: 1, sends: 0 } }
      })
      const unknown = yield* Effect.flip(gate.pass(generateSecret("hld"), [], counted))
      assert.deepStrictEqual([unknown._tag, unknown._tag === "Unauthorized" && unknown.error], ["Unauthorized", "Unknown or revoked API token."])
      const lacking = yield* Effect.flip(gate.pass(secret, ["tokens:manage", "notifications:send", "inbox:read"], counted))
      assert.deepStrictEqual([lacking._tag, lacking._tag === "MissingScope" && lacking.required], ["MissingScope", ["tokens:manage", "inbox:read"]])
      assert.strictEqual(demanded, 0)
      for (let i = 0; i < 3; i++) yield* gate.pass(secret, ["notifications:send"], counted)
      const over = yield* Effect.flip(gate.pass(secret, [], counted))
      assert.instanceOf(over, OverRateLimit)
      assert.deepStrictEqual([over._tag === "OverRateLimit" && over.outcome.refused, demanded], ["requests", 4])
    }).pipe(Effect.scoped))
})
