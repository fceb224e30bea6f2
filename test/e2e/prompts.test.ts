/**
 * A prompt's expiry survives a restart of a real `herald serve`: one prompt
 * whose deadline falls while the server is down expires as soon as the next
 * process starts; one whose deadline is still ahead expires on time under
 * the next process, and its waiter is answered at that moment.
 *
 * The test moves the deadlines (the prompt rows and their stored expiry
 * timers) instead of waiting the one-minute minimum: the first while the
 * server is down, the second after the restart.
 */
import { assert, describe, it } from "@effect/vitest"
import { HeraldClient, HeraldPersonClient } from "@herald/client"
import { ConfigProvider, Effect, Layer } from "effect"
import { AppConfig } from "../../packages/server/src/config/AppConfig.ts"
import { cliDatabaseLayer } from "../../packages/server/src/db/Database.ts"
import { childDatabase } from "../support/database.ts"
import { startServer } from "../support/process.ts"
import { moveDeadline } from "../support/prompts.ts"
import { personOn } from "../support/serverClients.ts"

const clients = (baseUrl: string, session: string, token: string) =>
  Effect.all({
    app: Effect.provide(Effect.service(HeraldPersonClient), HeraldPersonClient.layer({ baseUrl, token: session, retries: 0 })),
    agent: Effect.provide(Effect.service(HeraldClient), HeraldClient.layer({ baseUrl, token, retries: 0 }))
  })

/** The database of a stopped server, opened as the CLI would. */
const offlineDatabase = (env: Record<string, string>) =>
  cliDatabaseLayer.pipe(
    Layer.provide(AppConfig.layer),
    Layer.provide(ConfigProvider.layer(ConfigProvider.fromUnknown(env)))
  )

describe("prompt expiry across a restart", () => {
  it.live("expires a prompt whose deadline passed while down at once, and one still ahead on time", () =>
    Effect.scoped(Effect.gen(function*() {
      const { env } = yield* childDatabase
      const first = yield* startServer(env)
      const { session } = yield* personOn(env, { email: "grace@example.test", name: "Grace" })
      const { app } = yield* clients(first.baseUrl, session, "unused")
      const token = yield* app.tokens.create({ payload: { name: "restart test", scopes: ["interactions:create", "interactions:read"] } })
      const { agent } = yield* clients(first.baseUrl, session, token.secret)
      const ask = (title: string) =>
        Effect.map(
          agent.interactions.create({ payload: { kind: "approval", title, prompt: "p", expiresInSeconds: 3600 } }),
          (c) => c.interaction.id
        )
      const missed = yield* ask("deadline passes while down")
      const ahead = yield* ask("deadline after the restart")
      yield* first.kill

      // While down, the first deadline passes.
      yield* Effect.scoped(moveDeadline(missed, Date.now() - 1000).pipe(Effect.provide(offlineDatabase(env))))

      const second = yield* startServer(env)
      const ready = Date.now()
      const after = yield* clients(second.baseUrl, session, token.secret)
      const waited = yield* after.agent.interactions.wait({ params: { id: missed }, query: { timeout: 10 } })
      assert.strictEqual(waited.status, "expired")
      assert.isBelow(Date.now() - ready, 2000, "expired at once after the restart")

      // The second prompt's timer was stored by the first process; the second honours it on time
      // (its deadline brought forward to two seconds from now, as if an hour had passed).
      const aheadDeadline = Date.now() + 2000
      yield* moveDeadline(ahead, aheadDeadline).pipe(Effect.provide(offlineDatabase(env)), Effect.scoped)
      const pending = yield* after.agent.interactions.get({ params: { id: ahead } })
      assert.strictEqual(pending.status, "pending")
      const woken = yield* after.agent.interactions.wait({ params: { id: ahead }, query: { timeout: 30 } })
      assert.strictEqual(woken.status, "expired")
      assert.isAtLeast(Date.now(), aheadDeadline)
      assert.isBelow(Date.now() - aheadDeadline, 1000, "expired within a second of its deadline")
    })), { timeout: 120_000 })
})
