/**
 * A create racing a delete of what it names answers the endpoint's 404, not
 * a 500: the reply webhook a new service names is deleted by a transaction
 * that is still open while the create checks it (the row is still visible)
 * and inserts (the foreign-key check waits on the delete's lock); the delete
 * then commits, the insert breaks the foreign key, and the answer is 404.
 * Needs a second database connection to hold the delete open, so PostgreSQL
 * only (the embedded database has one).
 */
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Fiber, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import { usingPostgres } from "../../../../test/support/database.ts"
import { makeAgent, rawFetch, testServerLayer } from "../../../../test/support/server.ts"

/** Until a statement of this database waits on a lock (the insert's foreign-key check on our delete). */
const untilALockWait = (sql: SqlClient.SqlClient) =>
  Effect.gen(function*() {
    // Backend status is cached for the length of a transaction: clear it so each look is fresh.
    yield* sql`SELECT pg_stat_clear_snapshot()`
    return yield* sql<{ n: number }>`
      SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock' AND query ILIKE '%INSERT INTO%services%'`
  }).pipe(Effect.repeat({ schedule: Schedule.spaced("5 millis"), until: (rows) => rows[0]!.n > 0 }), Effect.timeout("20 seconds"))

describe.runIf(usingPostgres)("a create racing a delete", () => {
  layer(testServerLayer({ HERALD_ALLOW_PRIVATE_NETWORK_TARGETS: "1" }), { timeout: "60 seconds", excludeTestServices: true })("services", (it) => {
    it.effect("a service naming a reply webhook deleted in the same instant is 404, not 500", () =>
      Effect.gen(function*() {
        const agent = yield* makeAgent(["services:read", "services:write"])
        const webhook = yield* agent.client.webhooks.create({ payload: { name: "hook", url: "http://127.0.0.1:9/hook" } })
        const sql = yield* SqlClient.SqlClient
        const create = yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql`DELETE FROM reply_webhooks WHERE id = ${webhook.webhook.id}`
          const request = yield* Effect.forkScoped(rawFetch("/api/agent/services", {
            method: "POST",
            headers: { authorization: `Bearer ${agent.secret}`, "content-type": "application/json" },
            body: JSON.stringify({ title: "racing", defaultReplyWebhookId: webhook.webhook.id })
          }))
          yield* untilALockWait(sql)
          return request
        }))
        const res = yield* Fiber.join(create)
        assert.strictEqual(res.status, 404)
        assert.deepStrictEqual(res.body, { error: "Reply webhook not found.", code: "NOT_FOUND" })
        assert.deepStrictEqual((yield* agent.client.services.list()).items, [])
      }))
  })
})
